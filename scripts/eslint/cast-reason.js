// ESLint rule gatehouse/cast-reason: a double assertion (`x as unknown as T`) says why.
//
// Casting through unknown turns the type checker off for one value. It stays only where a library
// forces it (an undeclared internal, an overload set, a type the library gets wrong), and then the
// line above (or the same line) carries the reason: `// reason: <why>`. A bare `as any` is refused
// by @typescript-eslint/no-explicit-any; its eslint-disable-next-line comment carries the reason
// after `-- reason:`.
const MARKER = /reason:\s*\S/;

const isUnknown = (t) => t?.type === 'TSUnknownKeyword';

export default {
  meta: {
    type: 'problem',
    docs: { description: 'a cast through unknown (`as unknown as T`) has a `// reason:` comment on the line above or the same line' },
    messages: { cast: 'Cast through unknown without a reason: type the value, or say why on the line above (// reason: ...)' },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode ?? context.getSourceCode();
    const reasonLines = new Set();
    for (const c of source.getAllComments()) {
      if (!MARKER.test(c.value)) continue;
      // a comment of its own before the code covers the next line; a trailing one its own line
      const trailing = source.getTokenBefore(c, { includeComments: false })?.loc.end.line === c.loc.start.line;
      for (let l = c.loc.start.line; l <= c.loc.end.line + (trailing ? 0 : 1); l++) reasonLines.add(l);
    }
    return {
      TSAsExpression(node) {
        const inner = node.expression;
        if (inner.type !== 'TSAsExpression' || !isUnknown(inner.typeAnnotation)) return;
        // the cast is where `as unknown as` is written: its line, or the line where the statement starts
        const lines = [inner.typeAnnotation.loc.start.line, node.loc.start.line, node.loc.end.line];
        if (lines.some((l) => reasonLines.has(l))) return;
        context.report({ node, messageId: 'cast' });
      },
    };
  },
};
