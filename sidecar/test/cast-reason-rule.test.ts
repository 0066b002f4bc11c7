// The lint rule that makes a cast through unknown say why (scripts/eslint/cast-reason.js, run by
// `npm run lint` on sidecar/src, sidecar/common/src, gateway/src and client/src): what it refuses
// and what it lets through.
import { describe, it } from 'node:test';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';

const { default: rule } = await import(new URL('../../scripts/eslint/cast-reason.js', import.meta.url).href);
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;
const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' } });
const cast = { messageId: 'cast' };

tester.run('gatehouse/cast-reason', rule, {
  valid: [
    'const n = v as number;',
    'const s = (x as Partial<Socket>).encrypted;',
    '// reason: the library does not declare it\nconst cm = (s as unknown as { cm: Cm }).cm;',
    'const cm = (s as unknown as { cm: Cm }).cm; // reason: the library does not declare it',
    // a statement over several lines: the reason above its first line, or above the cast's line
    '// reason: an aggregate the library cannot type\nconst rows = (await m.findAll({\n  raw: true,\n})) as unknown as { n: number }[];',
    'const rows = (await m.findAll({\n  raw: true,\n  // reason: an aggregate the library cannot type\n})) as unknown as { n: number }[];',
  ],
  invalid: [
    { code: 'const r = row as unknown as Row;', errors: [cast] },
    { code: '// the row\nconst r = row as unknown as Row;', errors: [cast] },
    // a reason two lines up does not count
    { code: '// reason: far away\n\nconst r = row as unknown as Row;', errors: [cast] },
  ],
});
