// The GPU as nvidia-smi reports it: name, compute capability (→ sm_XX), clocks, driver.
import { XMLParser } from 'fast-xml-parser';
import type { ProcessRunner } from './process';

export interface GpuInfo {
  index: number;
  name: string;
  /** "9.0" */
  computeCapability: string | null;
  /** "sm_90" */
  arch: string | null;
  architectureName: string | null;
  driverVersion: string | null;
  cudaVersion: string | null;
  memoryMiB: number | null;
  clocksMHz: { sm: number | null; memory: number | null; maxSm: number | null; maxMemory: number | null };
  uuid: string | null;
}

function mhz(v: unknown): number | null {
  const m = /(\d+)\s*MHz/.exec(String(v ?? ''));
  return m ? Number(m[1]) : null;
}

function mib(v: unknown): number | null {
  const m = /(\d+)\s*MiB/.exec(String(v ?? ''));
  return m ? Number(m[1]) : null;
}

/**
 * Compute capability when nvidia-smi's XML does not carry it (it usually does not): from the
 * product name and architecture. A guess for consumer parts; `--query-gpu=compute_cap` is
 * preferred (see readGpus).
 */
export function computeCapabilityFromName(name: string, architecture: string | null): string | null {
  const n = name.toUpperCase();
  if (/\b(H100|H200|H800|GH200)\b/.test(n) || architecture === 'Hopper') return '9.0';
  if (/\b(B100|B200|GB200)\b/.test(n)) return '10.0';
  if (/\bRTX (PRO )?50\d\d\b|BLACKWELL/.test(n)) return '12.0';
  if (/\b(L4|L40S?|RTX 40\d\d|RTX \d+ ADA)\b/.test(n) || architecture === 'Ada Lovelace') return '8.9';
  if (/\b(A100|A800|A30)\b/.test(n)) return '8.0';
  if (/\b(A10|A16|A40|A2|RTX 30\d\d|RTX A\d+)\b/.test(n) || architecture === 'Ampere') return '8.6';
  if (/\b(T4|RTX 20\d\d|QUADRO RTX)\b/.test(n) || architecture === 'Turing') return '7.5';
  if (/\bV100\b/.test(n) || architecture === 'Volta') return '7.0';
  return null;
}

export function archOf(computeCapability: string | null): string | null {
  if (!computeCapability) return null;
  const m = /^(\d+)\.(\d+)$/.exec(computeCapability.trim());
  return m ? `sm_${m[1]}${m[2]}` : null;
}

/** Parses `nvidia-smi -q -x`. */
export function parseNvidiaSmiXml(xml: string): GpuInfo[] {
  // Values stay strings ("13.0" must not become 13); malformed XML means no GPU information.
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    isArray: name => name === 'gpu',
  });
  // nvidia-smi's XML as fast-xml-parser returns it: shape checked field by field below.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let doc: any;
  try {
    doc = parser.parse(xml);
  } catch {
    return [];
  }
  const log = doc?.nvidia_smi_log;
  if (!log) return [];
  const gpus: unknown[] = log.gpu ?? [];
  return gpus.map((raw, index) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one <gpu> element, read defensively
    const g = raw as Record<string, any>;
    const name = String(g.product_name ?? 'unknown GPU');
    const architectureName = g.product_architecture ? String(g.product_architecture) : null;
    const cc = g.compute_cap ? String(g.compute_cap) : computeCapabilityFromName(name, architectureName);
    return {
      index,
      name,
      computeCapability: cc,
      arch: archOf(cc),
      architectureName,
      driverVersion: log.driver_version ? String(log.driver_version) : null,
      cudaVersion: log.cuda_version ? String(log.cuda_version) : null,
      memoryMiB: mib(g.fb_memory_usage?.total),
      clocksMHz: {
        sm: mhz(g.clocks?.sm_clock),
        memory: mhz(g.clocks?.mem_clock),
        maxSm: mhz(g.max_clocks?.sm_clock),
        maxMemory: mhz(g.max_clocks?.mem_clock),
      },
      uuid: g.uuid ? String(g.uuid) : null,
    };
  });
}

/** Parses `nvidia-smi --query-gpu=index,compute_cap --format=csv,noheader`. */
export function parseComputeCapQuery(csv: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of csv.split('\n')) {
    const m = /^\s*(\d+)\s*,\s*(\d+\.\d+)\s*$/.exec(line);
    if (m) out.set(Number(m[1]), m[2]);
  }
  return out;
}

/** Reads the GPUs; an empty list means no GPU (or no driver), never an error. */
export async function readGpus(nvidiaSmi: string, run: ProcessRunner): Promise<GpuInfo[]> {
  const xml = await run(nvidiaSmi, ['-q', '-x'], { timeoutMs: 20_000 });
  if (xml.exitCode !== 0) return [];
  const gpus = parseNvidiaSmiXml(xml.stdout);
  const cc = await run(nvidiaSmi, ['--query-gpu=index,compute_cap', '--format=csv,noheader'], { timeoutMs: 20_000 });
  if (cc.exitCode === 0) {
    for (const [i, c] of parseComputeCapQuery(cc.stdout)) {
      const g = gpus[i];
      if (g) {
        g.computeCapability = c;
        g.arch = archOf(c);
      }
    }
  }
  return gpus;
}
