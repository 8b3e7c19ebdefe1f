import cliProgress from 'cli-progress';
import { plain, writeTo } from './terminal.ts';

/**
 * 1234567 → "1.2 MiB": IEC units, as the console shows sizes (console/src/format.ts) and as the
 * API's limits are written (512 KiB, 5 MiB).
 */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** 1234567 → "1,234,567". */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export type Unit = 'bytes' | 'features' | 'items';

function format(unit: Unit, n: number): string {
  return unit === 'bytes' ? formatBytes(n) : formatCount(n);
}

/** One progress display: a bar on a terminal, else a line per change of `text`. */
export interface Bar {
  /** Moves the bar; a new `total`/`unit` switches what is counted; a new `text` is logged when not a TTY. */
  update(value: number, options?: { total?: number; unit?: Unit; text?: string }): void;
  /** Ends the bar (a terminal gets its final state and a newline). */
  stop(): void;
}

export interface Output {
  /** Whether bars are drawn (stderr is a terminal). */
  readonly tty: boolean;
  /** A line on stderr (above a bar being drawn). */
  log(line: string): void;
  bar(label: string, total: number, unit: Unit, text?: string): Bar;
}

/** Progress goes to stderr, drawn only when stderr is a terminal. */
export function createOutput(stream: NodeJS.WriteStream = process.stderr): Output {
  const tty = Boolean(stream.isTTY) && process.env.TERM !== 'dumb';
  let active: cliProgress.SingleBar | undefined;
  return {
    tty,
    log(line) {
      if (active) active.stop();
      active = undefined;
      writeTo(stream, `${line}\n`);
    },
    bar(label, initialTotal, initialUnit, initialText = '') {
      let total = Math.max(0, initialTotal);
      let unit = initialUnit;
      // The text names what the server reports (status, phase): plain, so the bar's line stays one line.
      let text = plain(initialText);
      let value = 0;
      if (!tty) {
        if (text) writeTo(stream, `${label}: ${text}\n`);
        return {
          update(v, options = {}) {
            value = v;
            if (options.total !== undefined) total = options.total;
            if (options.unit !== undefined) unit = options.unit;
            if (options.text !== undefined && plain(options.text) !== text) {
              text = plain(options.text);
              const amount =
                total > 0
                  ? `${format(unit, value)}/${format(unit, total)}${unit === 'bytes' ? '' : ` ${unit}`}`
                  : '';
              writeTo(stream, `${label}: ${text}${amount ? ` (${amount})` : ''}\n`);
            }
          },
          stop() {},
        };
      }
      const payload = () => ({
        label,
        text,
        amount: `${total > 0 ? `${format(unit, value)}/${format(unit, total)}` : format(unit, value)}${unit === 'features' ? ' features' : ''}`,
      });
      const bar = new cliProgress.SingleBar(
        {
          stream,
          format: '{label} |{bar}| {percentage}% | {amount} | {text}',
          barCompleteChar: '\u2588',
          barIncompleteChar: '\u2591',
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          etaBuffer: 50,
          fps: 10,
        },
        cliProgress.Presets.shades_classic,
      );
      active?.stop();
      active = bar;
      bar.start(Math.max(total, 1), 0, payload());
      return {
        update(v, options = {}) {
          value = v;
          if (options.total !== undefined) {
            total = options.total;
            bar.setTotal(Math.max(total, 1));
          }
          if (options.unit !== undefined) unit = options.unit;
          if (options.text !== undefined) text = plain(options.text);
          bar.update(Math.min(value, Math.max(total, 1)), payload());
        },
        stop() {
          if (active === bar) {
            bar.stop();
            active = undefined;
          }
        },
      };
    },
  };
}
