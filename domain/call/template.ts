/**
 * Prompt templates (docs/language-model.md#placeholders): `{{name}}` or `{{ name }}` is replaced by the variable
 * `name`. A name is letters, digits, `_`, `-` and `.`; spaces or tabs may pad it inside the braces. Anything else
 * between braces is text, not a placeholder.
 */
const PLACEHOLDER = /\{\{[ \t]*([\p{L}\p{N}_.-]+)[ \t]*\}\}/gu;

/** The names of the placeholders in `text`, each once, in the order they first appear. */
export function placeholders(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(PLACEHOLDER)) names.add(m[1]!);
  return [...names];
}

/**
 * Fills every placeholder whose name is a variable with its value, as written: a value is never read as a template
 * in turn. A placeholder without a variable stays as it was written, and its name is reported in `unknown` (each name
 * once, in the order it first appears), so the caller can say which variables a prompt expected and did not get.
 */
export function fillTemplate(text: string, variables: Readonly<Record<string, string>>): { text: string; unknown: string[] } {
  const unknown = new Set<string>();
  const filled = text.replace(PLACEHOLDER, (written, name: string) => {
    if (Object.hasOwn(variables, name)) return variables[name]!;
    unknown.add(name);
    return written;
  });
  return { text: filled, unknown: [...unknown] };
}
