// node_fetch.mjs: Node's fetch against idgen serve's HTTP API: IDs come as JSON strings,
// and BigInt keeps every digit. Usage: node node_fetch.mjs HTTP_ADDR.
import { check, checkIds, finish } from './check.mjs';

const base = `http://${process.argv[2]}`;
const one = await (await fetch(`${base}/v1/id`)).json();
checkIds('GET /v1/id', [one.id], 1);
const many = await (await fetch(`${base}/v1/ids?count=100`)).json();
checkIds('GET /v1/ids?count=100', many.ids, 100);
// What a client that took the IDs as numbers would have lost:
check('Numbers would lose digits', many.ids.some((id) => String(Number(id)) !== id));
const back = await (await fetch(`${base}/v1/decode/${BigInt(one.id)}`)).json();
check('decode of the BigInt gives the same ID', back.id === one.id, JSON.stringify(back));
finish();
