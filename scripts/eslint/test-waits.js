// ESLint rule gatehouse/test-waits: tests wait for a condition through the one waitFor
// (test/lib/wait.ts), not with a raw sleep or a hand-made poll loop.
//
// It reports, in the test files it is enabled for (eslint.config.js):
//   - a raw sleep: `new Promise((r) => setTimeout(r, ms))` (a promise that only arms a timer),
//     setTimeout from node:timers/promises, playwright's page.waitForTimeout(ms), or a call of a
//     helper named sleep/delay/pause;
//   - a poll loop: a for/while/do loop that waits on a timer inside (a raw sleep, or a promise that
//     arms one, e.g. "an event or 100 ms, whichever comes first").
// A timer that bounds another wait is not a sleep: an element of Promise.race([...]) (a deadline).
// Time that must pass on purpose (to prove something does NOT happen within a window, to leave a
// rate-limit window, to pace a load loop, a measurement window) stays, with a marker comment on the
// same line or the line above: `// not a condition: <why>`. A marker on the sleep covers its loop.
const MARKER = /not a condition:\s*\S/;
const SLEEP_NAMES = new Set(['sleep', 'delay', 'pause']);
const LOOPS = ['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement'];
const FUNCTIONS = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'FunctionDeclaration']);

const isIdent = (n, name) => n?.type === 'Identifier' && (name === undefined || n.name === name);
const isSetTimeoutCall = (n) => n?.type === 'CallExpression' && isIdent(n.callee, 'setTimeout');

/** The executor of `new Promise(executor)`, when node is one. */
function promiseExecutor(node) {
  if (node.type !== 'NewExpression' || !isIdent(node.callee, 'Promise')) return null;
  const fn = node.arguments[0];
  return fn && (fn.type === 'ArrowFunctionExpression' || fn.type === 'FunctionExpression') ? fn : null;
}

/** `new Promise((r) => setTimeout(r, ms))`: a promise whose executor does nothing but arm a timer. */
function isTimerPromise(node) {
  const fn = promiseExecutor(node);
  if (!fn) return false;
  if (fn.body.type !== 'BlockStatement') return isSetTimeoutCall(fn.body);
  const body = fn.body.body;
  return body.length === 1 && body[0].type === 'ExpressionStatement' && isSetTimeoutCall(body[0].expression);
}

/** Any promise whose executor arms a timer (a sleep, or "an event or a timer, whichever is first"). */
function armsTimer(node) {
  const fn = promiseExecutor(node);
  if (!fn) return false;
  let found = false;
  walk(fn.body, (n) => {
    if (isSetTimeoutCall(n)) found = true;
    return !found && !FUNCTIONS.has(n.type);
  });
  return found;
}

/** Calls node's visit on node and (while visit returns true) on everything below it. */
function walk(node, visit) {
  if (!node || typeof node.type !== 'string' || !visit(node)) return;
  for (const key of Object.keys(node)) {
    if (key === 'parent') continue;
    const v = node[key];
    if (Array.isArray(v)) for (const c of v) walk(c, visit);
    else if (v && typeof v.type === 'string') walk(v, visit);
  }
}

/** Whether node is (a `.then` chain on) an element of Promise.race([...]): a deadline, not a sleep. */
function isRaceDeadline(node) {
  let n = node;
  while (n.parent?.type === 'MemberExpression' && n.parent.object === n && n.parent.parent?.type === 'CallExpression' && n.parent.parent.callee === n.parent)
    n = n.parent.parent;
  const arr = n.parent;
  if (arr?.type !== 'ArrayExpression') return false;
  const call = arr.parent;
  return (
    call?.type === 'CallExpression' &&
    call.arguments[0] === arr &&
    call.callee.type === 'MemberExpression' &&
    isIdent(call.callee.object, 'Promise') &&
    isIdent(call.callee.property, 'race')
  );
}

export default {
  meta: {
    type: 'suggestion',
    docs: { description: 'tests wait through waitFor (test/lib/wait.ts): no raw sleep or poll loop without a `// not a condition: why` marker' },
    schema: [],
    messages: {
      sleep:
        'Raw sleep in a test: wait for the condition with waitFor (test/lib/wait.ts); if time must pass on purpose, say why on this line or the line above: `// not a condition: <why>`.',
      loop: 'Hand-made poll loop in a test: use waitFor (test/lib/wait.ts); if this loop paces on purpose, mark it: `// not a condition: <why>`.',
    },
  },
  create(context) {
    const source = context.sourceCode ?? context.getSourceCode();
    const timersPromises = new Set(); // local names of setTimeout imported from timers/promises
    const markedLines = new Set();
    for (const c of source.getAllComments()) {
      if (!MARKER.test(c.value)) continue;
      // a comment after code marks its own line; a comment on lines of its own, those and the next
      const before = source.getTokenBefore(c, { includeComments: false });
      const trailing = before && before.loc.end.line === c.loc.start.line;
      for (let l = c.loc.start.line; l <= c.loc.end.line + (trailing ? 0 : 1); l++) markedLines.add(l);
    }
    const marked = (node) => markedLines.has(node.loc.start.line);

    /** Whether node is a raw sleep (whatever its context). */
    function isSleep(node) {
      if (node.type === 'NewExpression') return isTimerPromise(node);
      if (node.type !== 'CallExpression') return false;
      const c = node.callee;
      if (c.type === 'Identifier') return SLEEP_NAMES.has(c.name) || timersPromises.has(c.name);
      return c.type === 'MemberExpression' && !c.computed && isIdent(c.property, 'waitForTimeout');
    }

    function checkLoop(loop) {
      if (marked(loop)) return;
      let timer = null;
      walk(loop, (n) => {
        if (timer) return false;
        if (n !== loop && (isSleep(n) || armsTimer(n))) {
          timer = n;
          return false;
        }
        return n === loop || !FUNCTIONS.has(n.type);
      });
      if (timer && !marked(timer) && !isRaceDeadline(timer)) context.report({ node: loop, messageId: 'loop' });
    }

    const visitors = {
      ImportDeclaration(node) {
        if (node.source.value !== 'timers/promises' && node.source.value !== 'node:timers/promises') return;
        for (const s of node.specifiers) if (s.type === 'ImportSpecifier' && isIdent(s.imported, 'setTimeout')) timersPromises.add(s.local.name);
      },
      'NewExpression, CallExpression'(node) {
        if (isSleep(node) && !isRaceDeadline(node) && !marked(node)) context.report({ node, messageId: 'sleep' });
      },
    };
    for (const l of LOOPS) visitors[l] = checkLoop;
    return visitors;
  },
};
