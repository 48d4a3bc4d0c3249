import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { nginxBinary } from '../apply/check.js';
import { EnvironmentError, isSystemError, reason } from '../apply/environment.js';
import { stageBuild } from '../build/staged-build.js';
import { workerOwner } from '../apply/worker-user.js';
import { OutputFolder } from '../apply/write.js';
import { mainConfigName } from '../model/nginx.js';
import { printable, printableLines } from '../model/printable.js';
import { build } from '../build/build.js';
import { InputError } from '../sources/files.js';
import { ClusterAccessError } from '../sources/cluster/access-error.js';
import {
  collect,
  diagnosticsOf,
  exitCodes,
  outcome,
  packageVersion,
  progress,
  readManifests,
  readResolvConf,
  reportDiagnostics,
  translateOptionsOf,
  withCommonOptions,
  withTranslateOptions,
  type CliIo,
} from './common.js';
import {
  defaults,
  parseClassName,
  parseListenAddress,
  parseAbsoluteFile,
  parseNamespacedName,
  toBaseTranslateOptions,
  UsageError,
  type CommonFlags,
  type TranslateFlags,
} from './options.js';
import { auditCommand } from './audit.js';
import { diffCommand } from './diff.js';
import { reviewCommand } from './review.js';
import { routesCommand } from './routes.js';
import type { AdmissionFlags } from '../sidecar/admission-server.js';

export { exitCodes, type CliIo } from './common.js';

/** Thin CLI: parse flags, run the pipeline, hand diagnostics to a reporter, map outcomes to exit codes. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = exitCodes.clean;
  const program = new Command('ingress2nginx')
    .description('Render Kubernetes Ingress (ingress-nginx dialect) into configuration for a stock nginx.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run with --help for usage)')
    .version(packageVersion(), '-V, --version', 'print the version of ingress2nginx');

  const setExit = (code: number) => (exitCode = code);
  renderCommand(program, io, setExit);
  validateCommand(program, io, setExit);
  diffCommand(program, io, setExit);

  routesCommand(program, io, setExit);
  reviewCommand(program, io, setExit);

  auditCommand(program, io, setExit);

  runCommand(program, io, setExit);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? exitCodes.clean : exitCodes.failure;
    }
    if (
      error instanceof InputError ||
      error instanceof UsageError ||
      error instanceof EnvironmentError ||
      error instanceof ClusterAccessError
    ) {
      io.stderr(`ingress2nginx: ${printable(error.message)}\n`);
      return exitCodes.failure;
    }
    if (isSystemError(error)) {
      // The machine refused something no command caught itself: still one line, never a stack trace.
      const path = error.path !== undefined ? `${error.path}: ` : '';
      io.stderr(`ingress2nginx: ${printable(`${path}${reason(error)}`)}\n`);
      return exitCodes.failure;
    }
    io.stderr(`ingress2nginx: internal error: ${printableLines(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
    return exitCodes.failure;
  }
}

/** `render`: build, optionally check with nginx -t, and replace the output folder's files. */
function renderCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  withCommonOptions(
    program.command('render').description('render manifests into DIR/nginx.conf and key material'),
    'diagnostics: text on stderr, or json, sarif or markdown on stdout',
  )
    .requiredOption('-o, --output <dir>', 'output directory')
    .option('--check', 'run nginx -t on the result before it replaces DIR; leave out resources nginx rejects', false)
    .option('--nginx-bin <path>', 'nginx binary for --check (default: $NGINX_BIN or nginx)')
    .option('--request-log <path>', 'absolute file nginx appends a line per request and passthrough connection to, as for the cluster mode\'s request metrics', parseAbsoluteFile)
    .action(async (flags: CommonFlags & { output: string; check: boolean; nginxBin?: string; requestLog?: string }) => {
      const options = { ...(await translateOptionsOf(flags, io, flags.check, flags.nginxBin)), ...(flags.requestLog !== undefined && { requestLog: flags.requestLog }) };
      const source = await readManifests(flags, io);
      const folder = await OutputFolder.open(flags.output, { workerOwner: await workerOwner(nginxBinary(flags.nginxBin)) });
      try {
        const rendered = await stageBuild(folder, source.snapshot, options, flags.check ? nginxBinary(flags.nginxBin) : undefined);
        const { result, nginx } = rendered;
        const diagnostics = await diagnosticsOf(source, result);
        const extra = { statuses: result.statuses, ...(nginx && { nginx }) };
        if (!rendered.staged) {
          // The output folder keeps the last good config: nothing was moved into it.
          reportDiagnostics(diagnostics, flags, io, extra);
          setExit(exitCodes.failure);
          return;
        }
        await folder.commit(rendered.staged);
        if (rendered.rejected) await folder.keepRejected(rendered.rejected);
        reportDiagnostics(diagnostics, flags, io, extra);
        setExit(outcome(diagnostics, flags.strict));
        progress(
          flags,
          io,
          `wrote ${join(flags.output, mainConfigName)}: ${result.model.http.virtualHosts.length} host(s), ` +
            `${result.model.stream.frontends.reduce((n, f) => n + f.routes.length, 0)} SNI route(s), ` +
            `${result.model.files.length} key file(s)`,
        );
        if (nginx) progress(flags, io, 'nginx -t: configuration is valid');
      } finally {
        await folder.close();
      }
    });
}

/** `validate`: diagnostics only. */
function validateCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  withCommonOptions(
    program.command('validate').description('report diagnostics only; write nothing'),
    'diagnostics: text on stderr, or json, sarif or markdown on stdout',
  ).action(async (flags: CommonFlags) => {
    const options = await translateOptionsOf(flags, io, false);
    const source = await readManifests(flags, io);
    const result = build(source.snapshot, options);
    const diagnostics = await diagnosticsOf(source, result);
    reportDiagnostics(diagnostics, flags, io, { statuses: result.statuses });
    setExit(outcome(diagnostics, flags.strict));
  });
}

/** `run`: the cluster mode. */
function runCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  withTranslateOptions(program.command('run').description('watch the cluster and keep a stock nginx beside it configured (sidecar)'))
    .requiredOption('-o, --output <dir>', 'folder nginx reads its config from (shared with the nginx container)')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else the Pod service account)')
    .option('--namespace <namespace>', 'watch only this namespace (repeatable; default: all)', collect)
    .option('--spawn-nginx', 'start nginx as a child process and restart it when it exits', false)
    .option('--nginx-bin <path>', 'nginx binary for -V, -t and (with --spawn-nginx) to run (default: $NGINX_BIN or nginx)')
    .option('--metrics-address <host:port>', '/healthz, /readyz and /metrics', parseListenAddress, { host: '0.0.0.0', port: 10254 })
    .addOption(
      new Option('--request-metrics <boolean>', 'request metrics under ingress-nginx\'s names, from a line per request that nginx appends to RUN/requests.log')
        .choices(['true', 'false'])
        .default('true'),
    )
    .option('--publish-service <namespace/name>', 'Service whose load-balancer addresses go into Ingress and Gateway status', parseNamespacedName)
    .option('--publish-address <address>', 'address to write into Ingress and Gateway status (repeatable)', collect)
    .addOption(
      new Option('--update-status <boolean>', 'write the load-balancer addresses into Ingress status (false while another controller serves the same Ingresses)')
        .choices(['true', 'false'])
        .default('true'),
    )
    .option('--election-id <name>', 'name of the leader-election Lease', parseClassName, 'ingress2nginx')
    .option('--election-namespace <namespace>', 'namespace of the Lease (default: the Pod namespace)', parseClassName)
    .addOption(
      new Option('--log-format <format>', 'log lines on stdout').choices(['json', 'text']).default(process.stdout.isTTY ? 'text' : 'json'),
    )
    .addOption(new Option('--log-level <level>', 'least level logged').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .option('--validating-webhook <host:port>', 'answer validating admission reviews over HTTPS here (ingress-nginx\'s flag; :8443 is all addresses)', parseWebhookAddress)
    .option('--validating-webhook-certificate <file>', 'PEM certificate (chain) of the webhook, read again when the file changes')
    .option('--validating-webhook-key <file>', 'PEM key of the webhook certificate, read again when the file changes')
    .option('--validating-webhook-nginx-check', 'also check each candidate\'s config with nginx -t (slower; see docs/cluster.md)', false)
    .option('--validating-webhook-ca-secret <namespace/name>', 'make the webhook certificate: the CA from this Secret (filled when empty), a leaf for --validating-webhook-service, the CA into --validating-webhook-configuration', parseNamespacedName)
    .option('--validating-webhook-service <name>', 'the webhook Service the certificate names (in the Secret\'s namespace)', 'ingress2nginx-webhook')
    .option('--validating-webhook-configuration <name>', 'the ValidatingWebhookConfiguration whose caBundle is set', 'ingress2nginx')
    .action(async (flags: TranslateFlags & RunFlags) => {
      if (flags.publishService !== undefined && flags.publishAddress !== undefined) {
        throw new UsageError('give --publish-service or --publish-address, not both');
      }
      // run serves the resolver for endpoints, so it is on unless told off.
      const runFlags = { ...flags, endpointResolver: flags.endpointResolver ?? (flags.upstreams === 'endpoints' ? defaults.endpointResolverPort : 'off') };
      const admission = admissionFlags(flags, toBaseTranslateOptions(runFlags, readResolvConf).runDir);
      // Loaded here, not at start-up: the cluster client and the metrics library cost every command 0.3 s and 70 MB.
      const { defaultRunTiming, runSidecar } = await import('../sidecar/run.js');
      const code = await runSidecar(
        {
          output: flags.output,
          translate: toBaseTranslateOptions(runFlags, readResolvConf),
          ...(flags.kubeconfig !== undefined && { kubeconfig: flags.kubeconfig }),
          namespaces: flags.namespace ?? [],
          spawnNginx: flags.spawnNginx,
          nginxBin: nginxBinary(flags.nginxBin),
          metricsHost: flags.metricsAddress.host,
          metricsPort: flags.metricsAddress.port,
      requestMetrics: flags.requestMetrics === 'true',
          ...(flags.publishService !== undefined && { publishService: flags.publishService }),
          publishAddresses: flags.publishAddress ?? [],
          updateStatus: flags.updateStatus === 'true',
          electionId: flags.electionId,
          ...(flags.electionNamespace !== undefined && { electionNamespace: flags.electionNamespace }),
          upstreams: flags.upstreams,
          logFormat: flags.logFormat,
          logLevel: flags.logLevel,
          timing: defaultRunTiming,
          ...(admission && { admission }),
        },
        {
          env: io.env ?? process.env,
          log: io.stdout,
          stopRequested: (io.stopRequested ?? stopSignal)(),
          ...(io.onListening && { onListening: io.onListening }),
        },
      );
      setExit(code);
    });
}

interface RunFlags {
  readonly output: string;
  readonly kubeconfig?: string;
  readonly namespace?: string[];
  readonly spawnNginx: boolean;
  readonly nginxBin?: string;
  readonly metricsAddress: { readonly host: string; readonly port: number };
  readonly requestMetrics: 'true' | 'false';
  readonly publishService?: string;
  readonly publishAddress?: string[];
  readonly updateStatus: 'true' | 'false';
  readonly electionId: string;
  readonly electionNamespace?: string;
  readonly logFormat: 'json' | 'text';
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly validatingWebhook?: { readonly host: string; readonly port: number };
  readonly validatingWebhookCertificate?: string;
  readonly validatingWebhookKey?: string;
  readonly validatingWebhookNginxCheck: boolean;
  readonly validatingWebhookCaSecret?: string;
  readonly validatingWebhookService: string;
  readonly validatingWebhookConfiguration: string;
}

/** ingress-nginx writes `--validating-webhook=:8443` for all addresses. */
function parseWebhookAddress(value: string): { host: string; port: number } {
  return parseListenAddress(value.startsWith(':') ? `0.0.0.0${value}` : value);
}

/**
 * The webhook's flags together, or none. The certificate comes from files, or with
 * --validating-webhook-ca-secret is made into RUN/webhook/ (or the files named); anything else given
 * without the address, or the address without a certificate, is a usage error.
 */
function admissionFlags(flags: RunFlags, runDir: string): AdmissionFlags | undefined {
  const { validatingWebhook: address, validatingWebhookCaSecret: caSecret } = flags;
  const certificateFile = flags.validatingWebhookCertificate ?? (caSecret === undefined ? undefined : join(runDir, 'webhook', 'tls.crt'));
  const keyFile = flags.validatingWebhookKey ?? (caSecret === undefined ? undefined : join(runDir, 'webhook', 'tls.key'));
  if (address === undefined && certificateFile === undefined && keyFile === undefined && !flags.validatingWebhookNginxCheck) return undefined;
  if (address === undefined || certificateFile === undefined || keyFile === undefined) {
    throw new UsageError('--validating-webhook needs --validating-webhook-certificate and --validating-webhook-key (or --validating-webhook-ca-secret), and they need it');
  }
  const [namespace = '', name = ''] = caSecret?.split('/') ?? [];
  const selfSigned = caSecret === undefined ? undefined : { caSecret: { namespace, name }, service: flags.validatingWebhookService, configuration: flags.validatingWebhookConfiguration };
  return { host: address.host, port: address.port, certificateFile, keyFile, nginxCheck: flags.validatingWebhookNginxCheck, ...(selfSigned && { selfSigned }) };
}

/**
 * SIGTERM or SIGINT, whichever comes first. `on`, not `once`: execa's clean-up of child processes
 * (signal-exit) re-raises a signal when it finds no other listener for it, which would kill us in the
 * middle of stopping.
 */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.on('SIGTERM', () => resolve());
    process.on('SIGINT', () => resolve());
  });
}
