// The docs' cron tables and systemd units read as cron and systemd read them: their schedules checked, their commands
// turned into what those would run (cron's \% and systemd's $$ and %% undone), so a test can run them.

/** One job of an /etc/cron.d table: five time fields, the user, the command as cron hands it to /bin/sh. */
export interface CronJob {
  schedule: string[];
  user: string;
  command: string;
}

const CRON_FIELDS: [string, number, number][] = [["minute", 0, 59], ["hour", 0, 23], ["day of month", 1, 31], ["month", 1, 12], ["day of week", 0, 7]];

/** Why a cron time field is wrong (numbers, ranges, lists and steps: crontab(5)), or null. */
function cronFieldProblem(field: string, [name, low, high]: [string, number, number]): string | null {
  for (const part of field.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) return `${name} ${JSON.stringify(field)} is not a cron field`;
    const numbers = [m[2], m[3]].filter((n) => n !== undefined).map(Number);
    if (numbers.some((n) => n < low || n > high)) return `${name} ${JSON.stringify(field)} is outside ${low}..${high}`;
    if (m[4] !== undefined && Number(m[4]) === 0) return `${name} ${JSON.stringify(field)} has a step of 0`;
  }
  return null;
}

/**
 * An /etc/cron.d table (crontab(5)): comment lines, NAME=value lines, and jobs. Throws naming the line when a time field
 * is wrong or a command holds a bare %, which cron would turn into a new line (write \%).
 */
export function readCronTable(text: string): { env: Record<string, string>; jobs: CronJob[] } {
  const env: Record<string, string> = {};
  const jobs: CronJob[] = [];
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (assignment) {
      env[assignment[1]] = assignment[2];
      continue;
    }
    const fields = line.split(/\s+/);
    if (fields.length < 7) throw new Error(`cron: ${JSON.stringify(line)} has no user and command after its five time fields`);
    const problems = fields.slice(0, 5).map((f, i) => cronFieldProblem(f, CRON_FIELDS[i])).filter((p) => p !== null);
    if (problems.length > 0) throw new Error(`cron: ${JSON.stringify(line)}: ${problems.join("; ")}`);
    const command = line.replace(/^(\S+\s+){6}/, "");
    if (/(^|[^\\])%/.test(command)) throw new Error(`cron: ${JSON.stringify(command)} holds a bare %: cron ends the command there`);
    jobs.push({ schedule: fields.slice(0, 5), user: fields[5], command: command.replaceAll("\\%", "%") });
  }
  return { env, jobs };
}

/** A unit file's settings by section, each key's values in order (systemd.syntax(7); no line continuations). */
export function readUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | null = null;
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = sections.get(header[1]) ?? new Map();
      sections.set(header[1], section);
      continue;
    }
    const setting = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!setting || !section) throw new Error(`unit: ${JSON.stringify(line)} is not a setting of a section`);
    section.set(setting[1], [...(section.get(setting[1]) ?? []), setting[2]]);
  }
  return sections;
}

/** Words split as systemd splits ExecStart= and Environment= (whitespace, single and double quotes). */
function splitWords(value: string): string[] {
  const words: string[] = [];
  for (const m of value.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) words.push(m[1] ?? m[2]?.replace(/\\(.)/g, "$1") ?? m[3]);
  return words;
}

/** ExecStart='s argv as systemd runs it: %% is %, $$ is $ (any other % specifier or $VAR is refused: it would be expanded). */
export function unitCommand(execStart: string): string[] {
  if (/%[^%]/.test(execStart.replaceAll("%%", ""))) throw new Error(`unit: ${execStart}: a % specifier systemd would expand; write %%`);
  if (/\$[^$]/.test(execStart.replaceAll("$$", ""))) throw new Error(`unit: ${execStart}: a $ systemd would expand; write $$`);
  return splitWords(execStart).map((w) => w.replaceAll("%%", "%").replaceAll("$$", "$"));
}

/** Environment= lines as variables. */
export function unitEnvironment(lines: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of lines.flatMap(splitWords)) {
    const eq = word.indexOf("=");
    if (eq <= 0) throw new Error(`unit: Environment= ${JSON.stringify(word)} is not NAME=value`);
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return env;
}
