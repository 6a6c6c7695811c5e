-- opaque.sql: opaque IDs under the tests' key 000102...1f (tests/pg/regress.sh writes
-- it and names it in idgen.opaque_key_file): the values of docs/opaque.md and of
-- `idgen opaque encode`, a permutation, and its refusals.
SELECT idgen_opaque(120705948263120896);
SELECT idgen_unopaque(8296964069946032915);
SELECT count(*) AS ids, count(DISTINCT o) AS distinct_opaque,
       bool_and(idgen_unopaque(o) = id) AS round_trip, bool_and(o >= 0) AS non_negative
  FROM (SELECT id, idgen_opaque(id) AS o FROM idgen_next_batch(10000) id) d;
-- The ends of the domain, as `idgen opaque encode` gives them.
SELECT idgen_opaque(0), idgen_opaque(9223372036854775807);
SELECT idgen_unopaque(1928147665358327327), idgen_unopaque(5158646560925547725);
SELECT idgen_opaque(NULL);
SELECT idgen_opaque(-1);
SELECT idgen_unopaque(-9223372036854775808);
