/**
 * Reading a JSON file a person wrote (a seed, a faults file), with errors that say where: one place
 * for the read and the parse, so every such file reports them alike.
 */
import { readFile } from 'node:fs/promises';

/**
 * The parsed content of `path`. Throws an `Error` whose message reads on after the file name:
 * `cannot read the <what> (ENOENT: …)` or `not valid JSON (<the parser's message> (line L column C))`.
 * Callers put the path before it and wrap it in their own error class.
 */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the ${what} (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`not valid JSON (${jsonErrorWithPosition(error, text)})`);
  }
}

/** The parser's message on one line, with the line and column when it gives only an offset. */
function jsonErrorWithPosition(error: unknown, text: string): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position === undefined || /\(line \d+ column \d+\)/.test(message)) return message;
  const before = text.slice(0, Number(position));
  const line = before.split('\n').length;
  const column = Number(position) - before.lastIndexOf('\n');
  return `${message} (line ${line} column ${column})`;
}
