// node_redis.mjs: node-redis (npm `redis`) against idgen serve with its default options:
// it opens with HELLO 3, so every reply below is RESP3. Usage: node node_redis.mjs
// PORT AUTH_PORT TOKEN (AUTH_PORT: a server started with --auth-token-file).
import { createClient, createClientPool } from 'redis';
import { check, checkIds, expectError, finish } from './check.mjs';

const [port, authPort, token] = process.argv.slice(2);
const url = `redis://127.0.0.1:${port}`;

const client = createClient({ url });
client.on('error', (err) => console.log(`client error: ${err.message}`));
await client.connect();
check('PING', (await client.ping()) === 'PONG');
const id = await client.sendCommand(['ID']);
checkIds('ID', [id], 1);
checkIds('IDS 100 (RESP3)', await client.sendCommand(['IDS', '100']), 100);
const decoded = JSON.parse(await client.sendCommand(['DECODE', id]));
check('DECODE: the same ID back', decoded.id === id, JSON.stringify(decoded));
check('DECODE: worker and sequence', typeof decoded.fields.sequence === 'number' &&
      'worker' in decoded.fields, JSON.stringify(decoded));
// node-redis pipelines commands sent together: 200 on one connection, in order.
const piped = await Promise.all(Array.from({ length: 200 }, () => client.sendCommand(['ID'])));
checkIds('200 pipelined IDs', piped, 200);
const batch = await client.multi().addCommand(['IDS', '3']).addCommand(['PING'])
  .exec(true); // execAsPipeline: no MULTI, which an ID service has no use for
checkIds('a pipeline batch', batch[0], 3);
check('CLIENT SETINFO was kept', /lib-name=node-redis/.test(await client.sendCommand(['CLIENT', 'INFO'])));
await client.quit();

const pool = createClientPool({ url }, { minimum: 8, maximum: 8 });
pool.on('error', (err) => console.log(`pool error: ${err.message}`));
await pool.connect();
const lists = await Promise.all(Array.from({ length: 64 },
  () => pool.execute((c) => c.sendCommand(['IDS', '50']))));
checkIds('a pool of 8: 64 x IDS 50', lists.flat(), 3200, false);
await pool.close();

const authed = createClient({ url: `redis://127.0.0.1:${authPort}`, password: token });
authed.on('error', () => {});
await authed.connect();
checkIds('AUTH (HELLO 3 AUTH default token), then ID', [await authed.sendCommand(['ID'])], 1);
await authed.quit();
const wrong = createClient({ url: `redis://127.0.0.1:${authPort}`, password: 'wrong-token-xyz',
                             socket: { reconnectStrategy: false } });
wrong.on('error', () => {});
await expectError('a wrong token is refused', wrong.connect(), /WRONGPASS/);
finish();
