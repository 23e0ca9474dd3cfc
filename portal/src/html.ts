/** Markup that is already safe: only `html` and `raw` make one, so every other value is escaped. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (char) => ENTITIES[char]!);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * Escaping by construction: every interpolated value is escaped (attribute-safe: quotes too)
 * unless it is SafeHtml from another `html` template; arrays render each item; null, undefined
 * and false render nothing. Attribute values must still be quoted in the template.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}
