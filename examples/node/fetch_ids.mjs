// fetch_ids.mjs: IDs from `idgen serve` over HTTP with Node's fetch (Node 18 or later).
//
//   node fetch_ids.mjs            # IDGEN_HTTP=host:port, default 127.0.0.1:8080
//
// The JSON carries IDs as strings: BigInt(id) keeps every digit; Number(id) would not.
const base = `http://${process.env.IDGEN_HTTP ?? '127.0.0.1:8080'}`;
// With --auth-token-file: fetch(url, { headers: { Authorization: 'Bearer <token>' } }).
const get = async (path) => (await fetch(base + path)).json();

const { id } = await get('/v1/id');
const big = BigInt(id);
console.log('ID     ', id, '->', big, Number(id) === Number(big + 1n) ? '(a Number could not tell it from id + 1)' : '');
const { ids } = await get('/v1/ids?count=5');
console.log('IDS    ', ids.map(BigInt));
const parts = await get(`/v1/decode/${big}`);
console.log(`DECODE  time ${parts.time}, worker ${parts.fields.worker}, sequence ${parts.fields.sequence}`);
