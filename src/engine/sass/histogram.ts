// Opcode histograms of a SASS function, by opcode and by class.
//
// Classes (each instruction falls in exactly one, so a class histogram sums to the instruction
// count, padding NOPs included):
//   FP32          FFMA FADD FMUL FMNMX FSETP FSEL FSET FCHK FSWZADD …
//   FP64          DFMA DADD DMUL DSETP DMNMX …
//   FP16_TENSOR   HFMA2 HADD2 HMUL2 HSETP2 HMNMX2 … and the matrix units HMMA IMMA DMMA BMMA
//                 HGMMA IGMMA QGMMA BGMMA (warpgroup MMA) …
//   INT           IMAD (not .MOV) IADD3 IADD LOP3 LOP SHF SHL SHR ISETP IMNMX LEA IABS POPC FLO
//                 BREV PRMT SEL VIADD PLOP3 …
//   CONVERT       F2F F2I I2F I2I F2FP FRND …
//   LOAD_GLOBAL   LDG, generic LD (usually global), LDGSTS (async global->shared copy), TMA loads
//   STORE_GLOBAL  STG, generic ST, TMA stores
//   SHARED        LDS STS LDSM STSM
//   LOCAL         LDL STL (register spills and local arrays)
//   CONST         LDC ULDC
//   ATOMIC        ATOM ATOMG ATOMS RED REDG …
//   TEXTURE       TEX TLD TLD4 TXQ SULD SUST …
//   BRANCH        BRA BRX JMP JMX CALL RET EXIT BSSY BSYNC BREAK WARPSYNC ENDCOLLECTIVE KILL …
//   SYNC          BAR MEMBAR DEPBAR ERRBAR SYNCS (mbarrier) ARRIVES WARPGROUP LDGDEPBAR FENCE …
//   SHUFFLE       SHFL VOTE VOTEU MATCH REDUX (warp-wide exchanges)
//   MOVE          MOV MOV32I IMAD.MOV, HFMA2.MMA Rd, -RZ, RZ, imm (ptxas's move-immediate idiom),
//                 S2R CS2R S2UR R2UR P2R R2P
//   SPECIAL       MUFU (sin, cos, exp2, rcp, rsqrt … on the special-function unit)
//   UNIFORM       other opcodes starting with U (uniform datapath: UIADD3 UMOV USHF ULEA …)
//   NOP           NOP
//   OTHER         everything else (NANOSLEEP, CCTL, PMTRIG …)
import type { SassFunction, SassInstruction } from './model';

export const SASS_CLASSES = [
  'FP32',
  'FP64',
  'FP16_TENSOR',
  'INT',
  'CONVERT',
  'LOAD_GLOBAL',
  'STORE_GLOBAL',
  'SHARED',
  'LOCAL',
  'CONST',
  'ATOMIC',
  'TEXTURE',
  'BRANCH',
  'SYNC',
  'SHUFFLE',
  'MOVE',
  'SPECIAL',
  'UNIFORM',
  'NOP',
  'OTHER',
] as const;

export type SassClass = (typeof SASS_CLASSES)[number];

const BY_OPCODE: Record<string, SassClass> = Object.create(null);
function put(cls: SassClass, opcodes: string): void {
  for (const op of opcodes.split(/\s+/)) if (op) BY_OPCODE[op] = cls;
}
put('FP32', 'FFMA FADD FMUL FMNMX FSETP FSEL FSET FCHK FSWZADD FSWZ FFMA32I FADD32I FMUL32I FCMP FMNMX3 FADD2 FFMA2 FMUL2');
put('FP64', 'DFMA DADD DMUL DSETP DMNMX DSET');
put(
  'FP16_TENSOR',
  'HFMA2 HADD2 HMUL2 HSETP2 HSET2 HMNMX2 HFMA2_32I HADD2_32I HMUL2_32I HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA OMMA QMMA UTCHMMA UTCIMMA UTCQMMA UTCOMMA',
);
put(
  'INT',
  'IMAD IADD3 IADD IADD32I IMUL IMUL32I IMAD32I LOP3 LOP LOP32I SHF SHL SHR ISETP ISET IMNMX IMNMX3 LEA IABS POPC FLO BREV PRMT SEL ICMP XMAD IDP IDP4A VIADD VIMNMX VIMNMX3 VIADDMNMX VABSDIFF VABSDIFF4 BMSK SGXT PLOP3 PSETP CSET CSETP BFE BFI IMADSP ISCADD',
);
put('CONVERT', 'F2F F2I I2F I2I F2FP I2FP F2IP FRND');
put('LOAD_GLOBAL', 'LDG LD LDGSTS UTMALDG UBLKCP UTMAPF');
put('STORE_GLOBAL', 'STG ST UTMASTG UTMAREDG UBLKRED');
put('SHARED', 'LDS STS LDSM STSM LDSLK STSCUL');
put('LOCAL', 'LDL STL');
put('CONST', 'LDC ULDC LDCU');
put('ATOMIC', 'ATOM ATOMG ATOMS RED REDG REDAS ATOMX');
put('TEXTURE', 'TEX TLD TLD4 TXD TXQ TMML SULD SUST SUATOM SURED TEXS TLDS TLD4S');
put(
  'BRANCH',
  'BRA BRX BRXU JMP JMX JMXU CALL RET EXIT BSSY BSYNC BREAK WARPSYNC ENDCOLLECTIVE KILL BPT RTT SSY SYNC PBK BRK PCNT CONT CAL JCAL PRET',
);
put('SYNC', 'BAR BARRIER MEMBAR DEPBAR ERRBAR SYNCS ARRIVES WARPGROUP LDGDEPBAR FENCE UCGABAR_ARV UCGABAR_WAIT ACQBULK');
put('SHUFFLE', 'SHFL VOTE VOTEU MATCH REDUX');
put('MOVE', 'MOV MOV32I S2R CS2R S2UR R2UR P2R R2P S2RU');
put('SPECIAL', 'MUFU RRO');
put('NOP', 'NOP');

/** The class of one instruction (see the table in the file header). */
export function classifyInstruction(ins: SassInstruction): SassClass {
  const op = ins.opcode;
  if (op === 'IMAD' && ins.modifiers.includes('MOV')) return 'MOVE';
  if (op === 'HFMA2' && isMoveIdiom(ins.operands)) return 'MOVE';
  const cls = BY_OPCODE[op];
  if (cls !== undefined) return cls;
  if (op.length > 1 && op.charCodeAt(0) === 85 /* U */) return 'UNIFORM';
  return 'OTHER';
}

/** `HFMA2.MMA R17, -RZ, RZ, 0, 0`: -0 * 0 + immediate = a move of the immediate. */
function isMoveIdiom(operands: string): boolean {
  const comma = operands.indexOf(',');
  if (comma < 0) return false;
  const rest = operands.substring(comma + 1).replace(/\s+/g, '');
  return rest.startsWith('-RZ,RZ,') || rest.startsWith('RZ,-RZ,') || rest.startsWith('RZ,RZ,');
}

/**
 * Instruction count per opcode ("FFMA": 64, …). With `withModifiers`, per full mnemonic
 * ("IMAD.WIDE": 12, "IMAD": 5, …) instead.
 */
export function opcodeHistogram(fn: SassFunction, opts: { withModifiers?: boolean } = {}): Record<string, number> {
  const h = new Map<string, number>();
  for (const ins of fn.instructions) {
    const key = opts.withModifiers && ins.modifiers.length > 0 ? ins.opcode + '.' + ins.modifiers.join('.') : ins.opcode;
    h.set(key, (h.get(key) ?? 0) + 1);
  }
  // fromEntries defines own properties, so even an odd key such as "__proto__" is counted.
  return Object.fromEntries(h);
}

/** Instruction count per class; every class is present (0 when absent), in SASS_CLASSES order. */
export function classHistogram(fn: SassFunction): Record<SassClass, number> {
  const h = {} as Record<SassClass, number>;
  for (const c of SASS_CLASSES) h[c] = 0;
  for (const ins of fn.instructions) h[classifyInstruction(ins)]++;
  return h;
}
