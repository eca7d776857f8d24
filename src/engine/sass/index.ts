// SASS-reading library: machine-code listings (cuobjdump, nvdisasm), cubin ELF sections,
// ptxas -v resource reports, opcode histograms, machine-code loops and occupancy.
export * from './model';
export { parseCuobjdumpSass } from './cuobjdump';
export { parseNvdisasm } from './nvdisasm';
export { readCubin, instructionCountFromElf } from './elf';
export { parsePtxasVerbose } from './ptxas';
export { classifyInstruction, classHistogram } from './histogram';
export type { SassClass } from './histogram';
export { findSassLoops } from './loops';
export type { SassLoop } from './loops';
