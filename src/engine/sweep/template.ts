// Template-parameter axes of a sweep: a value selects an instantiation of the swept kernel that
// the file already has (`template __global__ void hot_loop<2048>(…)` or a launch), matched on
// the demangled name of the cubin's functions (`hot_loop<2048>(unsigned long const*, …)`).

/** Template arguments of `base<…>` in a demangled name, split at top-level commas; null when it is not that template. */
export function templateArgsOf(demangled: string, base: string): string[] | null {
  const head = demangled.replace(/\(.*$/s, '');
  let at = -1;
  for (let i = head.indexOf(`${base}<`); i >= 0 && at < 0; i = head.indexOf(`${base}<`, i + 1)) {
    if (i === 0 || !/[A-Za-z0-9_]/.test(head[i - 1])) at = i;
  }
  if (at < 0) return null;
  const args: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = at + base.length + 1; i < demangled.length; i++) {
    const c = demangled[i];
    if (c === '<' || c === '(' || c === '[') depth++;
    else if ((c === '>' || c === ')' || c === ']') && depth > 0) depth--;
    else if (c === '>' && depth === 0) {
      args.push(cur.trim());
      return args;
    } else if (c === ',' && depth === 0) {
      args.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  return null;
}

/** `2048u`, `2048ul`, `(int)2048` and `2048` compare equal; anything else compares as written. */
export function normalizeTemplateValue(v: string): string {
  const s = v.trim().replace(/^\((?:unsigned |signed )?(?:int|long|short|char|long long)\)/, '');
  const m = /^([+-]?)(\d+)(?:u|l|ul|lu|ll|ull|llu)?$/i.exec(s);
  if (m) return `${m[1] === '-' ? '-' : ''}${m[2].replace(/^0+(?=\d)/, '')}`;
  return s;
}

/** Does the demangled function name instantiate `kernel` with these template values (by parameter name)? */
export function isInstantiation(demangled: string, kernel: string, parameters: readonly string[], values: Record<string, string>): boolean {
  const args = templateArgsOf(demangled, kernel);
  if (!args) return false;
  return Object.entries(values).every(([n, v]) => {
    const i = parameters.indexOf(n);
    return i >= 0 && i < args.length && normalizeTemplateValue(args[i]) === normalizeTemplateValue(v);
  });
}

/** `hot_loop<2048>`; with parameters not swept, their names: `tile<8, N>`. */
function instantiationName(kernel: string, parameters: readonly string[], values: Record<string, string>): string {
  return `${kernel}<${parameters.map(n => values[n] ?? n).join(', ')}>`;
}

/** Why a point measured nothing: the instantiation is not in the cubin, and which ones are. */
export function notInstantiatedMessage(
  kernel: string,
  parameters: readonly string[],
  values: Record<string, string>,
  functions: readonly string[],
): string {
  const swept = parameters.filter(n => n in values);
  const seen = new Set<string>();
  for (const f of functions) {
    const args = templateArgsOf(f, kernel);
    if (!args) continue;
    const picked = swept.map(n => args[parameters.indexOf(n)] ?? '?').map(normalizeTemplateValue);
    seen.add(picked.length === 1 ? picked[0] : `<${picked.join(', ')}>`);
  }
  const list = [...seen].sort((a, b) => {
    const [x, y] = [Number(a), Number(b)];
    return Number.isFinite(x) && Number.isFinite(y) ? x - y : a < b ? -1 : a > b ? 1 : 0;
  });
  return (
    `${instantiationName(kernel, parameters, values)} is not instantiated in the file: ` +
    (list.length
      ? `instantiations are ${list.join(', ')}`
      : `the cubin holds no instantiation of ${kernel} (instantiate it explicitly or launch it)`)
  );
}
