// The lint rule that keeps tests waiting through waitFor (scripts/eslint/test-waits.js, run by
// `npm run lint` on every test file): what it refuses and what it lets through.
import { describe, it } from 'node:test';
import { RuleTester } from 'eslint';

const { default: rule } = await import(new URL('../../scripts/eslint/test-waits.js', import.meta.url).href);
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });
const sleep = { messageId: 'sleep' };
const loop = { messageId: 'loop' };

tester.run('gatehouse/test-waits', rule, {
  valid: [
    'await waitFor(() => ready, 5000, "ready");',
    'await new Promise((r) => setTimeout(r, 100)); // not a condition: proves no mail is sent',
    "// not a condition: the breaker's timeout passes\nawait new Promise((r) => setTimeout(r, 3000));",
    'await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);',
    'await Promise.race([gone, new Promise((r) => setTimeout(r, 50)).then(() => assert.fail("not closed"))]);',
    'const t = setTimeout(() => c.kill(), 20000);',
    'await new Promise((resolve) => { const t = setTimeout(() => resolve(false), ms); p.once("exit", () => resolve(true)); });',
    'while (running) await call();',
    'while (next < n) { next++; await get(); }',
    'for (;;) { await tick(); } // not a condition: a load loop',
    'while (running) { await go(); await new Promise((r) => setTimeout(r, 5)); // not a condition: pacing\n}',
  ],
  invalid: [
    { code: 'await new Promise((r) => setTimeout(r, 300));', errors: [sleep] },
    { code: 'await new Promise((resolve) => { setTimeout(resolve, 300); });', errors: [sleep] },
    { code: 'await new Promise((r) => setTimeout(r, 300)); // the desktop is up', errors: [sleep] },
    { code: 'import { setTimeout as wait } from "node:timers/promises";\nawait wait(100);', errors: [sleep] },
    { code: 'await page.waitForTimeout(800);', errors: [sleep] },
    { code: 'await sleep(600);', errors: [sleep] },
    { code: 'const sleep = (ms) => new Promise((r) => setTimeout(r, ms));', errors: [sleep] },
    { code: 'for (let i = 0; i < 100 && !up; i++) await new Promise((r) => setTimeout(r, 20));', errors: [loop, sleep] },
    { code: 'while (mails.length < n) { await new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, 100); }); }', errors: [loop] },
    { code: 'for (;;) { if (await ok()) break; await delay(50); }', errors: [loop, sleep] },
    // a marker two lines up does not count
    { code: '// not a condition: far away\n\nawait sleep(1);', errors: [sleep] },
  ],
});
