// The strategies a sweep can use, by name (the CLI's --strategy, the panel's picker).
import { coordinate } from './coordinate';
import { exhaustive } from './exhaustive';
import type { Strategy } from './strategy';

export * from './strategy';
export { coordinate, exhaustive };

export const STRATEGIES: readonly Strategy[] = [exhaustive, coordinate];

export function strategyByName(name: string): Strategy {
  const s = STRATEGIES.find(x => x.name === name);
  if (!s) throw new Error(`unknown strategy '${name}': use ${STRATEGIES.map(x => x.name).join(' or ')}`);
  return s;
}
