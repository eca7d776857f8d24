// "Show server log" (also the status bar item's click).
import type { CommandFactory } from './context';

export const showOutput: CommandFactory =
  ({ output }) =>
  () =>
    output.show(true);
