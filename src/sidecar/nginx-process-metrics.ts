import { readdir, readFile } from 'node:fs/promises';
import { askControlSocket } from './nginx.js';

/**
 * nginx's own series under ingress-nginx's names (its nginx_status and process collectors), which its
 * dashboards read: connections and requests from `stub_status` on the control socket, and CPU, memory
 * and I/O of nginx's master and workers from /proc (the Pod shares its process namespace). Read when
 * scraped. Where ingress-nginx's CPU series counts system time only, this one counts user and system
 * time, which is what its dashboard's "CPU usage" panel means.
 */

/** Linux's USER_HZ and page size on every architecture Kubernetes runs nodes on. */
const clockTicks = 100;
const pageSize = 4096;

export interface NginxProcessSource {
  /** nginx's pid file: the master, whose children are the workers. */
  readonly pidFile: string;
  /** The control socket, with `stub_status` at `/nginx_status` when nginx has the module. */
  readonly controlSocket: string;
  readonly stubStatus: boolean;
  /** Rendered constant labels (`controller_class=...,...`), without braces. */
  readonly constantLabels: string;
}

export async function nginxProcessExposition(source: NginxProcessSource): Promise<string> {
  const out: string[] = [];
  const labels = source.constantLabels;
  const [processes, status] = await Promise.all([nginxProcesses(source.pidFile), source.stubStatus ? stubStatus(source.controlSocket) : undefined]);
  if (status) {
    const name = 'nginx_ingress_controller_nginx_process_connections';
    out.push(`# HELP ${name} Client connections now, by state (stub_status)`, `# TYPE ${name} gauge`);
    for (const state of ['active', 'reading', 'writing', 'waiting'] as const) out.push(`${name}{${labels},state="${state}"} ${status[state]}`);
    out.push(`# HELP ${name}_total Client connections since nginx started, by state (stub_status)`, `# TYPE ${name}_total counter`);
    for (const state of ['accepted', 'handled'] as const) out.push(`${name}_total{${labels},state="${state}"} ${status[state]}`);
    const requests = 'nginx_ingress_controller_nginx_process_requests_total';
    out.push(`# HELP ${requests} Client requests since nginx started (stub_status)`, `# TYPE ${requests} counter`, `${requests}{${labels}} ${status.requests}`);
  }
  if (processes.length > 0) {
    const bootTime = await readFile('/proc/stat', 'utf8').then((text) => Number(/^btime (\d+)/m.exec(text)?.[1] ?? 0));
    const sum = (pick: (p: ProcessSample) => number) => processes.reduce((total, p) => total + pick(p), 0);
    const series = (name: string, type: string, help: string, value: number) =>
      out.push(`# HELP nginx_ingress_controller_nginx_process_${name} ${help}`, `# TYPE nginx_ingress_controller_nginx_process_${name} ${type}`, `nginx_ingress_controller_nginx_process_${name}{${labels}} ${value}`);
    series('num_procs', 'gauge', 'nginx processes (master and workers)', processes.length);
    series('cpu_seconds_total', 'counter', 'CPU time of nginx processes, user and system, in seconds', sum((p) => p.cpuTicks) / clockTicks);
    series('resident_memory_bytes', 'gauge', 'Resident memory of nginx processes', sum((p) => p.residentPages) * pageSize);
    series('virtual_memory_bytes', 'gauge', 'Virtual memory of nginx processes', sum((p) => p.virtualBytes));
    series('oldest_start_time_seconds', 'gauge', 'Unix time the oldest nginx process started', bootTime + Math.min(...processes.map((p) => p.startTicks)) / clockTicks);
    const io = processes.filter((p) => p.io !== undefined);
    if (io.length > 0) {
      series('read_bytes_total', 'counter', 'Bytes nginx processes read from storage', io.reduce((t, p) => t + (p.io?.read ?? 0), 0));
      series('write_bytes_total', 'counter', 'Bytes nginx processes wrote to storage', io.reduce((t, p) => t + (p.io?.write ?? 0), 0));
    }
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

interface ProcessSample {
  readonly cpuTicks: number;
  readonly startTicks: number;
  readonly residentPages: number;
  readonly virtualBytes: number;
  readonly io?: { readonly read: number; readonly write: number };
}

/** The master (from the pid file) and its children, sampled from /proc. */
async function nginxProcesses(pidFile: string): Promise<ProcessSample[]> {
  const master = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(master) || master <= 0) return [];
  const samples: ProcessSample[] = [];
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
  await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
      if (stat === undefined) return;
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const parent = Number(fields[1]);
      if (Number(pid) !== master && parent !== master) return;
      const io = await readFile(`/proc/${pid}/io`, 'utf8').then(
        (text) => ({ read: Number(/^read_bytes: (\d+)/m.exec(text)?.[1] ?? 0), write: Number(/^write_bytes: (\d+)/m.exec(text)?.[1] ?? 0) }),
        () => undefined,
      );
      samples.push({
        cpuTicks: Number(fields[11]) + Number(fields[12]),
        startTicks: Number(fields[19]),
        virtualBytes: Number(fields[20]),
        residentPages: Number(fields[21]),
        ...(io && { io }),
      });
    }),
  );
  return samples;
}

interface StubStatus {
  readonly active: number;
  readonly accepted: number;
  readonly handled: number;
  readonly requests: number;
  readonly reading: number;
  readonly writing: number;
  readonly waiting: number;
}

/** `GET /nginx_status` on the control socket, parsed; undefined when nginx does not answer. */
async function stubStatus(socket: string): Promise<StubStatus | undefined> {
  const text = await askControlSocket(socket, '/nginx_status');
  return text === undefined ? undefined : parseStubStatus(text);
}

function parseStubStatus(text: string): StubStatus | undefined {
  const number = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
  const counts = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
  const status = {
    active: number(/Active connections:\s*(\d+)/),
    accepted: Number(counts?.[1] ?? NaN),
    handled: Number(counts?.[2] ?? NaN),
    requests: Number(counts?.[3] ?? NaN),
    reading: number(/Reading:\s*(\d+)/),
    writing: number(/Writing:\s*(\d+)/),
    waiting: number(/Waiting:\s*(\d+)/),
  };
  return Object.values(status).every(Number.isFinite) ? status : undefined;
}
