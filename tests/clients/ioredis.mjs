// ioredis.mjs: ioredis against idgen serve with its default options (6.0.0 opens with
// HELLO 3, then the INFO ready check). Usage: node ioredis.mjs PORT AUTH_PORT TOKEN.
import Redis from 'ioredis';
import { check, checkIds, expectError, finish } from './check.mjs';

const [port, authPort, token] = process.argv.slice(2);

const redis = new Redis({ port: Number(port), host: '127.0.0.1' });
check('PING', (await redis.ping()) === 'PONG');
const id = await redis.call('ID');
checkIds('ID', [id], 1);
checkIds('IDS 100', await redis.call('IDS', '100'), 100);
const decoded = JSON.parse(await redis.call('DECODE', id));
check('DECODE: the same ID back', decoded.id === id, JSON.stringify(decoded));
const results = await redis.pipeline(Array.from({ length: 200 }, () => ['call', 'ID'])).exec();
check('a pipeline of 200: no error', results.every(([err]) => err === null));
checkIds('a pipeline of 200', results.map(([, v]) => v), 200);
redis.disconnect();

// ioredis has no pool: eight connections at once.
const conns = Array.from({ length: 8 }, () => new Redis({ port: Number(port), host: '127.0.0.1' }));
const lists = await Promise.all(conns.flatMap((c) => Array.from({ length: 8 }, () => c.call('IDS', '50'))));
checkIds('8 connections: 64 x IDS 50', lists.flat(), 3200, false);
conns.forEach((c) => c.disconnect());

const authed = new Redis({ port: Number(authPort), host: '127.0.0.1', password: token });
checkIds('AUTH (HELLO 3 AUTH default token), then ID', [await authed.call('ID')], 1);
authed.disconnect();
const wrong = new Redis({ port: Number(authPort), host: '127.0.0.1', password: 'wrong-token-xyz',
                          lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
const seen = []; // ioredis reports the server's refusal as an 'error' event
wrong.on('error', (err) => seen.push(err.message));
await expectError('a wrong token: no connection', wrong.connect(), /./);
check('a wrong token is refused with WRONGPASS', seen.some((m) => /WRONGPASS/.test(m)),
      seen.join('; '));
wrong.disconnect();
finish();
