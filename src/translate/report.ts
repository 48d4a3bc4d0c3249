import { formatFieldPath, type Diagnostic, type FieldPath, type Severity } from '../model/diagnostics.js';
import type { SourceObject } from '../sources/snapshot.js';

/** Collects diagnostics about source objects, filling resource, file and line from the object's origin. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];

  add(severity: Severity, code: string, object: SourceObject | undefined, message: string, path?: FieldPath): void {
    this.diagnostics.push({
      severity,
      code,
      ...(object && {
        resource: {
          kind: object.kind,
          ...(object.metadata.namespace && { namespace: object.metadata.namespace }),
          name: object.metadata.name,
        },
      }),
      ...(object?.origin && { file: object.origin.file, line: object.origin.line }),
      ...(path && path.length > 0 && { field: formatFieldPath(path), path }),
      message,
    });
  }

  error(code: string, object: SourceObject | undefined, message: string, path?: FieldPath): void {
    this.add('error', code, object, message, path);
  }

  warning(code: string, object: SourceObject | undefined, message: string, path?: FieldPath): void {
    this.add('warning', code, object, message, path);
  }

  info(code: string, object: SourceObject | undefined, message: string, path?: FieldPath): void {
    this.add('info', code, object, message, path);
  }
}

export function resourceName(object: SourceObject): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}
