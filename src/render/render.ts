import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import type { NginxConfig, VirtualHost } from '../model/nginx.js';
import { shareServers, type NginxConfigView } from './shared-servers.js';

/** The rendered main config; key material travels separately in `model.files`. */
export interface Rendered {
  readonly nginxConf: string;
}

const compileOptions = { noEscape: true, strict: true } as const;

/** `templates/` of this package, found from this module whether it runs from `src/` or `dist/src/`. */
export function templatesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'templates');
    if (existsSync(join(candidate, 'nginx.conf.hbs'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('ingress2nginx: templates/nginx.conf.hbs not found beside the package');
    dir = parent;
  }
}

interface Templates {
  readonly main: Handlebars.TemplateDelegate<NginxConfigView>;
  readonly plainServerBody: Handlebars.TemplateDelegate<VirtualHost>;
  readonly tlsServerBody: Handlebars.TemplateDelegate<VirtualHost>;
}

let compiled: Templates | undefined;

/**
 * Compiles once, in an isolated Handlebars environment so no other code's helpers or partials can leak
 * in; partials are pre-compiled with the same strict, non-escaping options as the main template. `render`
 * calls the two server-body partials itself, per host, to find the hosts that can share a block.
 */
function templates(): Templates {
  if (compiled) return compiled;
  const handlebars = Handlebars.create();
  const dir = templatesDir();
  const partialsDir = join(dir, 'partials');
  for (const file of readdirSync(partialsDir).filter((f) => f.endsWith('.hbs')).sort()) {
    const source = readFileSync(join(partialsDir, file), 'utf8');
    handlebars.registerPartial(file.slice(0, -'.hbs'.length), handlebars.compile(source, compileOptions));
  }
  const serverBody = (name: string): Handlebars.TemplateDelegate<VirtualHost> => {
    const found: unknown = handlebars.partials[name];
    if (typeof found !== 'function') throw new Error(`ingress2nginx: templates/partials/${name}.hbs not found`);
    return found as Handlebars.TemplateDelegate<VirtualHost>;
  };
  compiled = {
    main: handlebars.compile<NginxConfigView>(readFileSync(join(dir, 'nginx.conf.hbs'), 'utf8'), compileOptions),
    plainServerBody: serverBody('plainServerBody'),
    tlsServerBody: serverBody('tlsServerBody'),
  };
  return compiled;
}

export function render(model: NginxConfig): Rendered {
  const { main, plainServerBody, tlsServerBody } = templates();
  // The bodies see the whole config as @root, as they would inside the main template.
  const options = { data: { root: model } };
  const view = shareServers(model, { plain: (host) => plainServerBody(host, options), tls: (host) => tlsServerBody(host, options) });
  return { nginxConf: main(view) };
}
