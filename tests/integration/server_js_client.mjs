// server_js_client.mjs: a JavaScript client (Node's fetch and BigInt) proving that IDs
// survive JSON as strings while Number() would lose their low digits.
// Usage: node server_js_client.mjs http://127.0.0.1:PORT
const base = process.argv[2];
let failed = 0;
const ok = (name, cond, detail = '') => {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${name}${cond ? '' : ' ' + detail}`);
  if (!cond) failed++;
};

const one = await (await fetch(`${base}/v1/id`)).json();
ok('id is a string', typeof one.id === 'string', typeof one.id);
const big = BigInt(one.id);
ok('id is above 2^53 (the case strings exist for)', big > 2n ** 53n, one.id);
ok('BigInt round-trips the string', big.toString() === one.id);

const res = await fetch(`${base}/v1/ids?count=1000`);
ok('ids 200', res.status === 200, String(res.status));
const { ids } = await res.json();
ok('1000 ids', ids.length === 1000, String(ids.length));
ok('all strings', ids.every((s) => typeof s === 'string'));
const asBig = ids.map(BigInt);
ok('strictly increasing as BigInt', asBig.every((v, i) => i === 0 || v > asBig[i - 1]));
ok('distinct', new Set(ids).size === 1000);
const asNum = new Set(ids.map(Number));
ok(`as Number they collapse: ${asNum.size} distinct of 1000 (why IDs are strings)`,
   asNum.size < 1000);

const dec = await (await fetch(`${base}/v1/decode/${one.id}`)).json();
ok('decode echoes the string id', dec.id === one.id, JSON.stringify(dec));
ok('decode time_ms is a safe Number', Number.isSafeInteger(dec.time_ms));
ok('decode fields.sequence is a number', typeof dec.fields.sequence === 'number');

const err = await fetch(`${base}/v1/ids?count=abc`);
const body = await err.json();
ok('error shape', err.status === 400 && body.error.code === 'bad_count' &&
   typeof body.error.message === 'string', JSON.stringify(body));

const info = await (await fetch(`${base}/v1/info`)).json();
ok('info has layout', info.layout && info.layout.name === 'snowflake');
process.exit(failed ? 1 : 0);
