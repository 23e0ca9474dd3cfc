// In a `u` regular expression a surrogate pair is one code point, so \p{Cs} matches only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Where in `value` a string, or an object's key, holds a lone surrogate (`"\ud800"` without its
 * pair): a path such as `consumers[0].username`, `` for the value itself; undefined where none
 * does. Kong's cjson refuses such a string, so none may be stored or sent to the data plane.
 */
export function loneSurrogatePath(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: `${path}[${index}]` }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const at = path === '' ? key : `${path}.${key}`;
        if (LONE_SURROGATE.test(key)) return at;
        stack.push({ value: item, path: at });
      }
    }
  }
  return undefined;
}
