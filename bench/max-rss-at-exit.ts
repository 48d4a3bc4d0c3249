import { writeFileSync } from 'node:fs';

/**
 * Preloaded (`node --import`) into a process that a bench measures from outside: writes the process's peak
 * resident set size, in bytes, to the file `I2N_MAX_RSS_FILE` names when it exits.
 */
const file = process.env['I2N_MAX_RSS_FILE'];
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
