// check.mjs: what every Node client test asserts about the IDs it got, and how it reports.
let failures = 0;

export function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : ': ' + detail}`);
  if (!ok) failures++;
}

// IDs must arrive as decimal strings (a Number loses digits past 2^53), survive a BigInt
// round trip unchanged, and increase when `increasing`.
export function checkIds(name, ids, count, increasing = true) {
  check(`${name}: ${count} IDs`, Array.isArray(ids) && ids.length === count,
        JSON.stringify(ids).slice(0, 200));
  check(`${name}: every ID a string`, ids.every((id) => typeof id === 'string'),
        ids.map((id) => typeof id).join(','));
  check(`${name}: BigInt round trip`, ids.every((id) => String(BigInt(id)) === id));
  check(`${name}: past 2^53`, ids.every((id) => BigInt(id) > 2n ** 53n), ids[0]);
  const big = ids.map(BigInt);
  check(`${name}: distinct`, new Set(ids).size === ids.length);
  if (increasing) check(`${name}: increasing`, big.every((v, i) => i === 0 || v > big[i - 1]));
}

export function finish() {
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('all checks passed');
  process.exit(0);
}

export async function expectError(name, promise, pattern) {
  try {
    await promise;
    check(name, false, 'no error');
  } catch (err) {
    check(name, pattern.test(String(err && err.message)), String(err && err.message));
  }
}
