// defineEndpoint types a handler by its declaration: the body, query and path parameters it gets are
// the outputs of their schemas (an id parameter a number), and what it returns must be the response
// schema's body. The @ts-expect-error lines are the test: `npm run lint` type-checks this file and
// fails when one of them compiles. The runtime test checks what defineEndpoint keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineEndpoint, type Params, type PathParamNames } from '../src/http/registry.js';
import { okWith } from '../src/http/responses.js';

const itemResponse = okWith({ item: z.object({ id: z.number().int(), name: z.string() }) });
const body = z.strictObject({ name: z.string().transform((s) => s.trim()), count: z.coerce.number().default(1) });

// path templates: ids are numbers, other names text unless the endpoint declares their schema
const _names: PathParamNames<'/tokens/:id/machines/:machineId'>[] = ['id', 'machineId'];
const _params: Params<'/tokens/:id/machines/:machineId'> = { id: 1, machineId: 2 };
const _tag: Params<'/tags/:name'> = { name: 'x' };
const _none: Params<'/peers'> = {};
// @ts-expect-error an id parameter is a number, never text
const _textId: Params<'/peers/:id'> = { id: '1' };
void [_names, _params, _tag, _none, _textId];

const endpoints = [
  defineEndpoint({
    method: 'PUT',
    path: '/items/:id',
    summary: 'typed',
    body,
    response: itemResponse,
    handler: ({ params, body: b }) => {
      const id: number = params.id;
      const count: number = b.count;
      // @ts-expect-error the path has no parameter named other
      void params.other;
      return { item: { id, name: `${b.name}${count}` } };
    },
  }),
  defineEndpoint({
    method: 'GET',
    path: '/items/:id',
    summary: 'a field of the wrong type',
    response: itemResponse,
    // @ts-expect-error name must be text
    handler: ({ params }) => ({ item: { id: params.id, name: 1 } }),
  }),
  defineEndpoint({
    method: 'GET',
    path: '/items',
    summary: 'a missing field',
    response: itemResponse,
    // @ts-expect-error item.name is required by the response schema
    handler: async () => ({ item: { id: 1 } }),
  }),
  defineEndpoint({
    method: 'GET',
    path: '/items/:id/other',
    summary: 'another body',
    response: itemResponse,
    // @ts-expect-error the response schema has no field items
    handler: async () => ({ items: [] }),
  }),
  defineEndpoint({
    method: 'GET',
    path: '/tags/:name',
    summary: 'a declared parameter',
    params: z.object({ name: z.string().transform((s) => s.length) }),
    query: z.strictObject({ q: z.string().optional() }),
    handler: ({ params, query, body: b }) => {
      const n: number = params.name;
      const q: string | undefined = query.q;
      const none: undefined = b;
      return { n, q, none };
    },
  }),
  defineEndpoint({
    method: 'GET',
    path: '/raw',
    summary: 'sets ctx.body itself',
    rawResponse: { contentType: 'text/plain', description: 'text' },
    handler: (_i, ctx) => void (ctx.body = 'x'),
  }),
];

test('defineEndpoint keeps the declaration as it is, with auth admin unless it says otherwise', () => {
  assert.deepEqual(
    endpoints.map((e) => [e.method, e.path, e.auth]),
    [
      ['PUT', '/items/:id', 'admin'],
      ['GET', '/items/:id', 'admin'],
      ['GET', '/items', 'admin'],
      ['GET', '/items/:id/other', 'admin'],
      ['GET', '/tags/:name', 'admin'],
      ['GET', '/raw', 'admin'],
    ],
  );
  assert.equal(endpoints[0].body, body);
  assert.equal(defineEndpoint({ method: 'GET', path: '/p', summary: 'p', auth: 'public', handler: () => ({}) }).auth, 'public');
  assert.throws(
    () => defineEndpoint({ method: 'GET', path: '/s', summary: 's', auth: 'public', secrets: 'x', handler: () => ({}) }),
    /only admin endpoints declare secrets/,
  );
});
