// Classifies the difference between two OpenAPI documents: what would break a client
// written against the old one. Breaking: a removed route, a removed response field, a
// removed enum value (request or response), a new required request field or parameter.
// `npm run openapi` rewrites docs/openapi.json; test/openapi-document.test.ts runs this
// check between the committed and the served document (CHANGELOG.md notes the breaks).

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

function resolve(document: Json, schema: unknown): Json | undefined {
  let current = schema as Json | undefined;
  for (let depth = 0; current && typeof current.$ref === 'string' && depth < 20; depth++) {
    const path = current.$ref.replace(/^#\//, '').split('/');
    let target: unknown = document;
    for (const segment of path) target = (target as Json | undefined)?.[segment];
    current = target as Json | undefined;
  }
  return current;
}

function compareSchemas(
  oldDoc: Json,
  newDoc: Json,
  oldSchema: unknown,
  newSchema: unknown,
  where: string,
  direction: 'request' | 'response',
  out: string[],
  depth = 0,
): void {
  if (depth > 12) return;
  const before = resolve(oldDoc, oldSchema);
  const after = resolve(newDoc, newSchema);
  if (!before || !after) return;
  if (Array.isArray(before.enum) && Array.isArray(after.enum)) {
    for (const value of before.enum) {
      if (!after.enum.includes(value))
        out.push(`${where}: enum value ${JSON.stringify(value)} removed`);
    }
  }
  const oldProps = (before.properties ?? {}) as Json;
  const newProps = (after.properties ?? {}) as Json;
  const oldRequired = new Set((before.required ?? []) as string[]);
  const newRequired = new Set((after.required ?? []) as string[]);
  for (const name of Object.keys(oldProps)) {
    if (!(name in newProps)) {
      // A response field a client may read, or a request field it may send.
      out.push(`${where}: field ${name} removed`);
      continue;
    }
    if (direction === 'response' && oldRequired.has(name) && !newRequired.has(name)) {
      out.push(`${where}: response field ${name} may now be absent`);
    }
    compareSchemas(
      oldDoc,
      newDoc,
      oldProps[name],
      newProps[name],
      `${where}.${name}`,
      direction,
      out,
      depth + 1,
    );
  }
  if (direction === 'request') {
    for (const name of newRequired) {
      if (!oldRequired.has(name)) out.push(`${where}: new required field ${name}`);
    }
  }
  if (before.items && after.items) {
    compareSchemas(
      oldDoc,
      newDoc,
      before.items,
      after.items,
      `${where}[]`,
      direction,
      out,
      depth + 1,
    );
  }
}

function jsonSchemaOf(holder: unknown): unknown {
  return (
    ((holder as Json | undefined)?.content as Json | undefined)?.['application/json'] &&
    (((holder as Json).content as Json)['application/json'] as Json).schema
  );
}

/** Every breaking change from `oldDoc` to `newDoc`, one line each (empty: compatible). */
export function breakingChanges(oldDoc: Json, newDoc: Json): string[] {
  const out: string[] = [];
  const oldPaths = (oldDoc.paths ?? {}) as Record<string, Json>;
  const newPaths = (newDoc.paths ?? {}) as Record<string, Json>;
  for (const [path, oldItem] of Object.entries(oldPaths)) {
    for (const method of METHODS) {
      const before = oldItem[method] as Json | undefined;
      if (!before) continue;
      const after = newPaths[path]?.[method] as Json | undefined;
      const where = `${method.toUpperCase()} ${path}`;
      if (!after) {
        out.push(`${where}: route removed`);
        continue;
      }
      const oldParams = (before.parameters ?? []) as Json[];
      const newParams = (after.parameters ?? []) as Json[];
      for (const parameter of newParams) {
        const existed = oldParams.some((p) => p.name === parameter.name && p.in === parameter.in);
        if (parameter.required && !existed)
          out.push(`${where}: new required ${parameter.in} parameter ${String(parameter.name)}`);
      }
      for (const parameter of oldParams) {
        const match = newParams.find((p) => p.name === parameter.name && p.in === parameter.in);
        if (match)
          compareSchemas(
            oldDoc,
            newDoc,
            parameter.schema,
            match.schema,
            `${where} ${String(parameter.name)}`,
            'request',
            out,
          );
      }
      const oldBody = jsonSchemaOf(before.requestBody);
      const newBody = jsonSchemaOf(after.requestBody);
      if (!oldBody && newBody && (after.requestBody as Json).required) {
        // An optional-looking body that fastify requires anyway is not new for callers
        // only when it accepts null; keep it simple: report it.
        out.push(`${where}: new required request body`);
      }
      if (oldBody && newBody)
        compareSchemas(oldDoc, newDoc, oldBody, newBody, `${where} body`, 'request', out);
      const oldResponses = (before.responses ?? {}) as Json;
      const newResponses = (after.responses ?? {}) as Json;
      for (const [status, response] of Object.entries(oldResponses)) {
        if (!status.startsWith('2')) continue;
        if (!(status in newResponses)) {
          out.push(`${where}: response ${status} removed`);
          continue;
        }
        compareSchemas(
          oldDoc,
          newDoc,
          jsonSchemaOf(response),
          jsonSchemaOf(newResponses[status]),
          `${where} ${status}`,
          'response',
          out,
        );
      }
    }
  }
  return out;
}
