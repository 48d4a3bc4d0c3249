// Types of pinned-sources.mjs for the TypeScript tests that import it.
export interface Pin {
  version: string;
  file: string;
  sha256: string;
}
export type PinKind = 'nginx' | 'openssl';
export interface Pins {
  file: string;
  nginx: Pin[];
  openssl: Pin[];
}
export const PINS_FILE: string;
export class ChecksumMismatch extends Error {}
export class NoneReachable extends Error {}
export function readPins(file?: string): Pins;
export function debianArchive(aptDir?: string): string | undefined;
export function poolUrl(archive: string, kind: PinKind, file: string): string;
export function fetchPinned(options: { pins: Pins; kind: PinKind; archive: string; dir: string; log?: (message: string) => void }): Promise<{ pin: Pin; file: string }>;
export function verifyPinned(options: { pins: Pins; archive: string; log?: (message: string) => void }): Promise<string[]>;
