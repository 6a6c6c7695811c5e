-- codecs.sql: decoding and text forms, which issue nothing: known IDs of each layout,
-- every form and its way back, and the inputs each refuses.
SET timezone = 'UTC';

-- Decoded as `idgen decode --json` decodes them (tests/pg/concurrency.sh compares the
-- two on issued IDs).
SELECT * FROM idgen_decode(120888658071941120);
SELECT * FROM idgen_decode(120888658071941120, 'snowflake');
SELECT * FROM idgen_decode(1212092628029698048, 'twitter');
SELECT * FROM idgen_decode(175928847299117063, 'discord');
SELECT * FROM idgen_decode(1234567890123, 'time:41,worker:10,seq:12,epoch:2026-01-01');
SELECT * FROM idgen_decode(0);
SELECT * FROM idgen_decode(NULL);
SELECT idgen_time(120888658071941120);
SELECT (idgen_decode(9007199254740991, 'js53')).fields;

-- Refused: a negative number, bits beyond the layout, a layout that is not one.
SELECT * FROM idgen_decode(-1);
SELECT idgen_time(-42);
SELECT * FROM idgen_decode(9007199254740992, 'js53');
SELECT * FROM idgen_decode(1, 'bogus');
SELECT * FROM idgen_decode(1, 'time:41,worker:10,seq:13,epoch:2026-01-01');
SELECT * FROM idgen_decode(1, 'time:41,seq:12');

-- Every form of one ID, and back.
SELECT f, idgen_format(120888658071941120, f) AS text,
       idgen_parse(idgen_format(120888658071941120, f)) AS any_form,
       idgen_parse(idgen_format(120888658071941120, f), f) AS this_form
  FROM unnest(ARRAY['decimal', 'base62', 'base32', 'hex', 'friendly']) f;
SELECT idgen_format(0, 'base62'), idgen_format(9223372036854775807, 'hex');
SELECT idgen_parse('0'), idgen_parse('7ZZZZZZZZZZZZ'), idgen_parse('7fffffffffffffff');
SELECT idgen_parse(NULL), idgen_parse('123', NULL);

-- Refused: unknown format, negative ID, and texts that are not exactly one form.
SELECT idgen_format(1, 'octal');
SELECT idgen_format(-1, 'hex');
SELECT idgen_parse('');
SELECT idgen_parse('-5');
SELECT idgen_parse('+5');
SELECT idgen_parse('007');
SELECT idgen_parse('12 ');
SELECT idgen_parse('abc!');
SELECT idgen_parse('9223372036854775808');
SELECT idgen_parse('8000000000000000', 'hex');
-- All digits, no leading zero: decimal, whatever its width (docs/codecs.md).
SELECT idgen_parse('1000000000000000');
SELECT idgen_parse('ILOU0000000000');
SELECT idgen_parse('ILOU000000000', 'base32');
SELECT idgen_parse('12345', 'hex');
SELECT idgen_parse('20261130140822087-7', 'friendly');
SELECT idgen_parse('20261130140822087-7-0', 'nope');
