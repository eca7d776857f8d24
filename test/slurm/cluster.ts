// A real single-node Slurm cluster on localhost for the Slurm sweep test (issue 28): its own
// slurm.conf, state, spool and logs in a temp folder, free ports, slurmctld and slurmd (and munged
// where this Slurm has no auth/none) started in the foreground as our children, stopped by stop().
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';

const DAEMONS = ['slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sinfo'];

function onPath(name: string): string | null {
  for (const d of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin']) {
    const p = path.join(d, name);
    if (d && fs.existsSync(p)) return p;
  }
  return null;
}

/**
 * Why the real-Slurm test cannot run, from the effective user id (undefined: not known) and the
 * Slurm programs not found; null when it can. Every reason that holds is given, and only those:
 * root is never told it is not root, and a user without Slurm hears both.
 */
export function slurmSkipReason(uid: number | undefined, missing: readonly string[]): string | null {
  const reasons: string[] = [];
  if (missing.length) {
    const install = `${uid === 0 ? '' : 'sudo '}apt-get install slurm-wlm munge`;
    reasons.push(`Slurm is not installed (${missing.join(', ')} missing; ${install})`);
  }
  if (uid !== 0) reasons.push(`not root (${uid === undefined ? 'user id not known' : `uid ${uid}`}; slurmd must run as root)`);
  return reasons.length ? reasons.join(', and ') : null;
}

/** Why the real-Slurm test cannot run here, or null. */
export function slurmMissing(): string | null {
  return slurmSkipReason(
    process.geteuid?.(),
    DAEMONS.filter(d => !onPath(d)),
  );
}

/** Slurm's plugin folder holds auth_none.so (Slurm before 23.11): no munge needed. */
function hasAuthNone(): boolean {
  const dirs = ['/usr/lib/x86_64-linux-gnu/slurm-wlm', '/usr/lib/aarch64-linux-gnu/slurm-wlm', '/usr/lib/slurm', '/usr/lib64/slurm'];
  return dirs.some(d => fs.existsSync(path.join(d, 'auth_none.so')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Cluster {
  /** SLURM_CONF for every client command. */
  env: Record<string, string>;
  log(): string;
  stop(): Promise<void>;
}

function hardware(): { cpus: number; memory: number } {
  const out = execFileSync(onPath('slurmd')!, ['-C'], { encoding: 'utf8' });
  return { cpus: Number(/CPUs=(\d+)/.exec(out)?.[1] ?? 1), memory: Number(/RealMemory=(\d+)/.exec(out)?.[1] ?? 1000) };
}

export async function startCluster(root: string): Promise<Cluster> {
  for (const d of ['state', 'spool', 'log']) fs.mkdirSync(path.join(root, d), { recursive: true });
  const [ctldPort, dPort] = [await freePort(), await freePort()];
  const hw = hardware();
  const children: ChildProcess[] = [];
  let auth = ['AuthType=auth/none', 'CredType=cred/none'];
  if (!hasAuthNone()) {
    // munge with a key and socket of its own
    const key = path.join(root, 'munge.key');
    fs.writeFileSync(key, crypto.randomBytes(1024), { mode: 0o400 });
    const socket = path.join(root, 'munge.socket');
    children.push(
      spawn(
        onPath('munged')!,
        [
          '-F',
          '-f',
          `--socket=${socket}`,
          `--key-file=${key}`,
          `--pid-file=${root}/munged.pid`,
          `--log-file=${root}/log/munged.log`,
          `--seed-file=${root}/munge.seed`,
        ],
        { stdio: 'ignore' },
      ),
    );
    auth = ['AuthType=auth/munge', 'CredType=cred/munge', `AuthInfo=socket=${socket}`];
    await new Promise(r => setTimeout(r, 1000));
  }
  const conf = path.join(root, 'slurm.conf');
  fs.writeFileSync(
    conf,
    [
      'ClusterName=unrolllens',
      'SlurmctldHost=localhost',
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${dPort}`,
      ...auth,
      'SlurmUser=root',
      'SlurmdUser=root',
      `StateSaveLocation=${root}/state`,
      `SlurmdSpoolDir=${root}/spool`,
      `SlurmctldPidFile=${root}/slurmctld.pid`,
      `SlurmdPidFile=${root}/slurmd.pid`,
      `SlurmctldLogFile=${root}/log/slurmctld.log`,
      `SlurmdLogFile=${root}/log/slurmd.log`,
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'MpiDefault=none',
      'ReturnToService=2',
      // finished tasks stay in squeue this long: the sweep reads how they ended from there
      'MinJobAge=600',
      'SchedulerType=sched/builtin',
      `NodeName=localhost CPUs=${hw.cpus} RealMemory=${hw.memory} State=UNKNOWN`,
      'PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env = { SLURM_CONF: conf };
  const daemon = (name: string, args: string[]) =>
    children.push(
      spawn(onPath(name)!, args, {
        env: { ...process.env, ...env },
        stdio: ['ignore', fs.openSync(`${root}/log/${name}.out`, 'w'), fs.openSync(`${root}/log/${name}.err`, 'w')],
      }),
    );
  daemon('slurmctld', ['-D', '-f', conf]);
  daemon('slurmd', ['-D', '-N', 'localhost', '-f', conf]);
  const log = () =>
    ['slurmctld.log', 'slurmd.log', 'slurmctld.err', 'slurmd.err']
      .map(f => {
        try {
          return `--- ${f}\n${fs
            .readFileSync(path.join(root, 'log', f), 'utf8')
            .split('\n')
            .slice(-15)
            .join('\n')}`;
        } catch {
          return '';
        }
      })
      .join('\n');
  const stop = async () => {
    for (const c of children.reverse()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    const end = Date.now() + 15_000;
    while (children.some(c => c.exitCode === null && c.signalCode === null) && Date.now() < end) await new Promise(r => setTimeout(r, 100));
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  // the node idle: the cluster takes jobs
  const end = Date.now() + 60_000;
  for (;;) {
    let state = '';
    try {
      state = execFileSync(onPath('sinfo')!, ['-h', '-n', 'localhost', '-o', '%T'], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
      }).trim();
    } catch {
      /* slurmctld not up yet */
    }
    if (state === 'idle') break;
    if (Date.now() > end) {
      const l = log();
      await stop();
      throw new Error(`the test cluster did not come up (node state '${state}'):\n${l}`);
    }
    await new Promise(r => setTimeout(r, 300));
  }
  return { env, log, stop };
}
