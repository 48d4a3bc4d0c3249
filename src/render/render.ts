import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import type { NginxConfig } from '../model/nginx.js';

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

let compiled: Handlebars.TemplateDelegate<NginxConfig> | undefined;

/**
 * Compiles once, in an isolated Handlebars environment so no other code's helpers or partials can leak
 * in; partials are pre-compiled with the same strict, non-escaping options as the main template.
 */
function template(): Handlebars.TemplateDelegate<NginxConfig> {
  if (compiled) return compiled;
  const handlebars = Handlebars.create();
  const dir = templatesDir();
  const partialsDir = join(dir, 'partials');
  for (const file of readdirSync(partialsDir).filter((f) => f.endsWith('.hbs')).sort()) {
    const source = readFileSync(join(partialsDir, file), 'utf8');
    handlebars.registerPartial(file.slice(0, -'.hbs'.length), handlebars.compile(source, compileOptions));
  }
  compiled = handlebars.compile<NginxConfig>(readFileSync(join(dir, 'nginx.conf.hbs'), 'utf8'), compileOptions);
  return compiled;
}

export function render(model: NginxConfig): Rendered {
  return { nginxConf: template()(model) };
}
