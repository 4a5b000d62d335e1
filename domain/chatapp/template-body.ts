/**
 * The variables of a message template's body (docs/chatapp.md#templates): positional `{{1}}`, `{{2}}`, … numbered
 * from 1 without gaps, or named `{{order_id}}` (lower-case letters, digits and `_`, starting with a letter), never
 * both in one body. A positional template is sent with an array of values, a named one with an object.
 */
export type TemplateVariables =
  | Readonly<{ format: 'none' }>
  | Readonly<{ format: 'positional'; count: number }>
  | Readonly<{ format: 'named'; names: readonly string[] }>;

/** The values a send gives: an array for positional templates, an object for named ones. */
export type TemplateValues = readonly string[] | Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME = /^[a-z][a-z0-9_]*$/;

/** The body's variables, or why it cannot be a template body (a sentence naming the problem). */
export function parseTemplateBody(body: string): { ok: true; variables: TemplateVariables } | { ok: false; problem: string } {
  const positions = new Set<number>();
  const names: string[] = [];
  for (const m of body.matchAll(PLACEHOLDER)) {
    const inner = m[1] ?? '';
    if (/^\d+$/.test(inner)) positions.add(Number(inner));
    else if (NAME.test(inner)) {
      if (!names.includes(inner)) names.push(inner);
    } else
      return {
        ok: false,
        problem: `{{${inner}}} is not a variable: use {{1}}, {{2}}, … or a name of lower-case letters, digits and _ such as {{order_id}}`,
      };
  }
  if (positions.size > 0 && names.length > 0)
    return { ok: false, problem: 'a template body uses positional ({{1}}) or named ({{name}}) variables, not both' };
  if (names.length > 0) return { ok: true, variables: { format: 'named', names } };
  if (positions.size === 0) return { ok: true, variables: { format: 'none' } };
  const count = positions.size;
  for (let i = 1; i <= count; i++)
    if (!positions.has(i)) return { ok: false, problem: `positional variables are numbered from {{1}} without gaps; {{${i}}} is missing` };
  return { ok: true, variables: { format: 'positional', count } };
}

/**
 * Why `values` do not fit the template's variables, or null when they do. Positional templates take an array
 * of exactly `count` strings; named ones an object with exactly their names; a template without variables none.
 */
export function variablesMismatch(v: TemplateVariables, values: TemplateValues | null): string | null {
  switch (v.format) {
    case 'none':
      if (values === null || (Array.isArray(values) ? values.length === 0 : Object.keys(values).length === 0)) return null;
      return 'the template has no variables: send no template.variables';
    case 'positional':
      if (!Array.isArray(values))
        return `the template takes ${v.count} positional variable${v.count === 1 ? '' : 's'}: send template.variables as an array of ${v.count} string${v.count === 1 ? '' : 's'}`;
      if (values.length !== v.count)
        return `the template takes ${v.count} positional variable${v.count === 1 ? '' : 's'} and ${values.length} ${values.length === 1 ? 'was' : 'were'} sent`;
      return null;
    case 'named': {
      const list = v.names.join(', ');
      if (values === null || Array.isArray(values))
        return `the template takes the named variables ${list}: send template.variables as an object with exactly these keys`;
      const given = Object.keys(values as Record<string, string>);
      const missing = v.names.filter((n) => !given.includes(n));
      const extra = given.filter((n) => !v.names.includes(n));
      if (missing.length || extra.length)
        return `the template takes the named variables ${list}${missing.length ? `; missing: ${missing.join(', ')}` : ''}${extra.length ? `; unknown: ${extra.join(', ')}` : ''}`;
      return null;
    }
  }
}

/** The body with its variables filled in; a placeholder without a value stays as written. */
export function renderTemplate(body: string, values: TemplateValues | null): string {
  return body.replace(PLACEHOLDER, (whole, inner: string) => {
    if (values === null) return whole;
    const v = Array.isArray(values)
      ? /^\d+$/.test(inner)
        ? values[Number(inner) - 1]
        : undefined
      : (values as Record<string, string>)[inner];
    return typeof v === 'string' ? v : whole;
  });
}
