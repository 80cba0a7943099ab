// A raster version's index tree, written as days stream in (date order): month pages, year pages, then the
// years for the root. Memory holds one month of days and one year of months, whatever the archive's length.

import type { Coverage } from "../../format/coverage.js";
import { DIST_FORMAT } from "../../format/objects.js";
import { summarizeDays, summarizeNodes } from "../../format/summaries.js";
import type { DayEntry, IndexNode, MonthPage, YearPage } from "../../format/version-index.js";
import { assertValid } from "../../schemas/validate.js";
import type { ObjectStore } from "../store/objects.js";

export interface IndexTree {
  years: IndexNode[];
  days: number;
  tiles: number;
  coverage: Coverage;
}

/** A tree as its writer finished it: also the months of each year page it wrote (a year taken whole has none here). */
export interface WrittenTree extends IndexTree {
  months: Map<string, IndexNode[]>;
}

export class IndexTreeWriter {
  private days: DayEntry[] = [];
  private months: IndexNode[] = [];
  private readonly years: IndexNode[] = [];
  private readonly monthsOf = new Map<string, IndexNode[]>();
  private last = "";

  constructor(private readonly store: ObjectStore) {}

  private checkOrder(first: string, last: string): void {
    if (first <= this.last) throw new Error(`index tree: ${first} does not follow ${this.last}`);
    this.last = last;
  }

  async addDay(day: DayEntry): Promise<void> {
    this.checkOrder(day.date, day.date);
    if (this.days.length > 0 && this.days[0].date.slice(0, 7) !== day.date.slice(0, 7)) await this.flushMonth();
    if (this.months.length > 0 && this.months[0].key.slice(0, 4) !== day.date.slice(0, 4)) await this.flushYear();
    this.days.push(day);
  }

  /** A month taken whole from another version (extend). */
  async addMonth(node: IndexNode): Promise<void> {
    this.checkOrder(node.coverage.first, node.coverage.last);
    await this.flushMonth();
    if (this.months.length > 0 && this.months[0].key.slice(0, 4) !== node.key.slice(0, 4)) await this.flushYear();
    this.months.push(node);
  }

  /** A year taken whole from another version (extend). */
  async addYear(node: IndexNode): Promise<void> {
    this.checkOrder(node.coverage.first, node.coverage.last);
    await this.flushMonth();
    await this.flushYear();
    this.years.push(node);
  }

  async finish(): Promise<WrittenTree> {
    await this.flushMonth();
    await this.flushYear();
    if (this.years.length === 0) throw new Error("index tree: no days");
    const { days, tiles, coverage } = summarizeNodes(this.years);
    return { years: this.years, months: this.monthsOf, days, tiles, coverage };
  }

  private async flushMonth(): Promise<void> {
    if (this.days.length === 0) return;
    const days = this.days;
    this.days = [];
    const page: MonthPage = { format: DIST_FORMAT, month: days[0].date.slice(0, 7), days };
    assertValid("dist-month-page.schema.json", page, `month page ${page.month}`);
    this.months.push({ key: page.month, ...summarizeDays(days), ref: await this.store.putJson(page) });
  }

  private async flushYear(): Promise<void> {
    if (this.months.length === 0) return;
    const months = this.months;
    this.months = [];
    const page: YearPage = { format: DIST_FORMAT, year: months[0].key.slice(0, 4), months };
    assertValid("dist-year-page.schema.json", page, `year page ${page.year}`);
    this.years.push({ key: page.year, ...summarizeNodes(months), ref: await this.store.putJson(page) });
    this.monthsOf.set(page.year, months);
  }
}
