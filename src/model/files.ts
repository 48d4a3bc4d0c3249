/** What the build writes beside nginx.conf, and the key files a server or route names. */

export interface OutputFile {
  /** Path relative to the output directory, using `/`. */
  readonly path: string;
  readonly contents: string;
  /** File mode; key material is 0o600. */
  readonly mode: number;
  /**
   * nginx's worker processes read the file at request time (`auth_basic_user_file`), not the master at
   * load: when we write as root, the file is given to the user the workers run as.
   */
  readonly readByWorkers?: boolean;
}

export interface TlsFiles {
  /** Relative to nginx.conf's directory. */
  readonly certificate: string;
  readonly certificateKey: string;
}
