// SASS-reading library: machine-code listings (cuobjdump, nvdisasm), cubin ELF sections,
// ptxas -v resource reports, opcode histograms, machine-code loops and occupancy.
export * from './model';
export { parseCuobjdumpSass, parseCuobjdumpSassByArch, parseResUsage, parseResUsageByArch } from './cuobjdump';
export type { ResUsageMember } from './cuobjdump';
export { parseNvdisasm, outermostLocation } from './nvdisasm';
export { readCubin, archFromFlags, instructionCountFromElf, EM_CUDA } from './elf';
export type { CubinInfo, CubinTextSection } from './elf';
export { parsePtxasLog, parsePtxasVerbose } from './ptxas';
export type { PtxasFunctionUsage, PtxasFunctionBlock, PtxasLog } from './ptxas';
export { SASS_CLASSES, classifyInstruction, opcodeHistogram, classHistogram } from './histogram';
export type { SassClass } from './histogram';
export { findSassLoops } from './loops';
export type { SassLoop } from './loops';
export { theoreticalOccupancy, archLimits, smNumber } from './occupancy';
export type { ArchLimits, OccupancyInput, OccupancyLimiter, OccupancyResult } from './occupancy';
