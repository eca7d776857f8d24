// nvcc's dependency list (-MD -MF, make syntax): the files a build read, and the marked `#line`
// name that tells a header variant from the original header in it.
import * as path from 'path';

/** The prerequisites of a make-style dependency file (nvcc -MD -MF), as absolute paths. */
export function parseDepFile(text: string, cwd: string): string[] {
  return parseDepWords(text).map(w => path.resolve(cwd, w));
}

/** The prerequisites of a dependency file as written (nvcc also lists the names of `#line` directives, verbatim). */
export function parseDepWords(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const colon = joined.search(/:(\s|$)/);
  if (colon < 0) return [];
  const words: string[] = [];
  let cur = '';
  const body = joined.slice(colon + 1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && body[i + 1] === ' ') {
      cur += ' ';
      i++;
    } else if (c === '$' && body[i + 1] === '$') {
      cur += '$';
      i++;
    } else if (/\s/.test(c)) {
      if (cur) words.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur) words.push(cur);
  return words;
}

/**
 * The name a header variant's `#line` directive gives the header: its path with `./` before the
 * file name. nvcc's -MD list repeats `#line` names verbatim, so the plain path there would look
 * like the original header was read; this spelling, which no include path produces (flags.ts
 * makes every -I absolute and normal), tells the two apart, and path.resolve maps it back.
 */
export function markedLineName(header: string): string {
  return `${path.dirname(header)}${path.sep}.${path.sep}${path.basename(header)}`;
}
