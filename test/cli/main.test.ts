import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_BROKEN_PIPE, exitCodeForSignal, exitQuietlyOnBrokenPipe, watchStopSignals } from '../../src/cli/io.js';
import { main, packageVersion } from '../../src/cli/main.js';
import { closestMatch, didYouMean, editDistance } from '../../src/cli/suggest.js';
import { captureIo } from './helpers.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('spoof-checker (the command itself)', () => {
  it.each(['--version', '-v', 'version'])('%s prints the version from package.json on stdout', async (flag) => {
    const { io, stdout, stderr } = captureIo();
    expect(await main([flag], io)).toBe(0);
    expect(stdout()).toBe(`${VERSION}\n`);
    expect(stderr()).toBe('');
    expect(packageVersion()).toBe(VERSION);
  });

  it.each(['--help', '-h', 'help'])('%s prints the commands on stdout and exits 0', async (flag) => {
    const { io, stdout, stderr } = captureIo();
    expect(await main([flag], io)).toBe(0);
    expect(stdout()).toMatch(/^spoof-checker: can someone send mail/);
    expect(stdout()).toMatch(/^ {2}check {6}check domains/m);
    expect(stderr()).toBe('');
  });

  it("'help scan' prints the options of scan", async () => {
    const { io, stdout } = captureIo();
    expect(await main(['help', 'scan'], io)).toBe(0);
    expect(stdout()).toMatch(/^Usage: spoof-checker scan <file\|-> \[options\]/);
  });

  it('prints the usage on stderr and exits 2 without a command', async () => {
    const { io, stdout, stderr } = captureIo();
    expect(await main([], io)).toBe(2);
    expect(stdout()).toBe('');
    expect(stderr()).toMatch(/^spoof-checker: can someone send mail/);
  });

  it.each([
    [['chek'], "spoof-checker: unknown command 'chek'. Did you mean 'check'?"],
    [['sacn', 'list.txt'], "spoof-checker: unknown command 'sacn'. Did you mean 'scan'?"],
    [['serv'], "spoof-checker: unknown command 'serv'. Did you mean 'serve'?"],
    [['dnsserve'], "spoof-checker: unknown command 'dnsserve'. Did you mean 'dns-serve'?"],
    [['--verison'], "spoof-checker: unknown option '--verison'. Did you mean '--version'?"],
    [['frobnicate'], "spoof-checker: unknown command 'frobnicate'."],
    [['constructor'], "spoof-checker: unknown command 'constructor'."],
  ])('%j: says what was meant, and exits 2', async (args, message) => {
    const { io, stdout, stderr } = captureIo();
    expect(await main(args, io)).toBe(2);
    expect(stdout()).toBe('');
    expect(stderr()).toBe(`${message}\nRun 'spoof-checker --help' for the list of commands.\n`);
  });

  it.each([
    [['check', 'a.example', '--jsn'], "spoof-checker check: unknown option '--jsn'. Did you mean '--json'?"],
    [['check', 'a.example', '--selector', 's1'], "spoof-checker check: unknown option '--selector'. Did you mean '--selectors'?"],
    [['scan', '-', '--concurency', '8'], "spoof-checker scan: unknown option '--concurency'. Did you mean '--concurrency'?"],
    [['scan', '-', '--fromat=csv'], "spoof-checker scan: unknown option '--fromat'. Did you mean '--format'?"],
    [['scan', '-', '--zone', 'z'], "spoof-checker scan: unknown option '--zone'. Did you mean '--zones'?"],
    [['scan', '-', '--wibble'], "spoof-checker scan: unknown option '--wibble'."],
  ])('%j: names the option meant', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await main(args, io)).toBe(2);
    expect(stderr().split('\n')[0]).toBe(message);
  });
});

describe('did-you-mean', () => {
  it.each([
    ['check', 'check', 0],
    ['chek', 'check', 1],
    ['chekc', 'check', 1], // a swap of neighbours is one edit
    ['scna', 'scan', 1],
    ['', 'scan', 4],
    ['serve', 'dns-serve', 4],
    ['kitten', 'sitting', 3],
  ])('editDistance(%j, %j) is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  it('suggests only close words, the closest first, ignoring case', () => {
    const commands = ['check', 'scan', 'serve', 'dns-serve'];
    expect(closestMatch('CHECK', commands)).toBe('check');
    expect(closestMatch('srve', commands)).toBe('serve');
    expect(closestMatch('x', commands)).toBeUndefined();
    expect(closestMatch('deploy', commands)).toBeUndefined();
    expect(didYouMean('scam', commands)).toBe(" Did you mean 'scan'?");
    expect(didYouMean('zzz', commands)).toBe('');
  });
});

describe('signals and pipes', () => {
  it('turns the first SIGINT or SIGTERM into the stop signal and exits on the second', async () => {
    const source = new EventEmitter();
    const exits: number[] = [];
    const stop = watchStopSignals(source as never, (code) => exits.push(code));
    source.emit('SIGTERM', 'SIGTERM');
    expect(await stop).toBe('SIGTERM');
    expect(exits).toEqual([]);
    source.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([130]);
  });

  it('maps signals to the shell status', () => {
    expect(exitCodeForSignal('SIGINT')).toBe(130);
    expect(exitCodeForSignal('SIGTERM')).toBe(143);
    expect(EXIT_BROKEN_PIPE).toBe(141);
  });

  it('ends quietly on a closed stdout, ignores a closed stderr, and reports other write errors', () => {
    const stdout = new EventEmitter();
    const stderr = new EventEmitter();
    const exits: number[] = [];
    const reports: string[] = [];
    exitQuietlyOnBrokenPipe({ stdout, stderr }, (code) => exits.push(code), (text) => reports.push(text));
    stderr.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(exits).toEqual([]);
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(exits).toEqual([141]);
    expect(reports).toEqual([]);
    stdout.emit('error', Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    expect(exits).toEqual([141, 1]);
    expect(reports).toEqual(['spoof-checker: cannot write the output: no space left on device\n']);
  });
});
