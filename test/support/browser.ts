import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core (which never downloads a browser of its own). A missing
 * browser fails the test, in CI and everywhere else: `node scripts/ensure-test-tools.mjs chromium`
 * installs it. Keep the detection in step with the chromium entry of that script.
 */

const INSTALL_HINT =
  'Install it as root with `apt-get install -y chromium` (or run `node scripts/ensure-test-tools.mjs chromium`), or set CHROMIUM_BIN to a Chromium binary.';

export function chromiumBinary(): string {
  const binary = process.env['CHROMIUM_BIN'] || '/usr/bin/chromium';
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new Error(`the review page tests need Chromium at ${binary}. ${INSTALL_HINT}`);
  }
  return binary;
}

/**
 * Headless, without any of Chromium's own network traffic. playwright-core gives every launch a fresh
 * temporary profile (it refuses a --user-data-dir of ours for a non-persistent browser).
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumBinary(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
