// ioredis_ids.mjs: IDs from `idgen serve` with ioredis (npm install ioredis).
//
//   node ioredis_ids.mjs          # IDGEN_RESP=host:port, default 127.0.0.1:6380
//
// Keep IDs as strings, or make BigInts of them: a JavaScript Number holds integers
// exactly only up to 2^53, and IDs pass it 25 days after their epoch.
import Redis from 'ioredis';

const [host, port] = (process.env.IDGEN_RESP ?? '127.0.0.1:6380').split(':');
// With --auth-token-file: new Redis({ host, port, password: '<token>' }).
const redis = new Redis({ host, port: Number(port) });

const id = await redis.call('ID'); // a string
console.log('ID     ', id, '->', BigInt(id));
const ids = await redis.call('IDS', '5'); // 5 strings, increasing
console.log('IDS    ', ids);
// A pipeline: several commands in one round trip.
const piped = await redis.pipeline().call('ID').call('ID').call('ID').exec();
console.log('piped  ', piped.map(([, value]) => value));
const parts = JSON.parse(await redis.call('DECODE', id));
console.log(`DECODE  time ${parts.time}, worker ${parts.fields.worker}, sequence ${parts.fields.sequence}`);
redis.disconnect();
