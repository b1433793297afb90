import { addUsage, totalTokens, type BudgetKind } from '../trace/records.js';
import type { TicketBudget } from '../ticket/types.js';
import { ZERO_USAGE, type TokenUsage } from '../trace/records.js';


export interface BudgetExceeded {
  which: BudgetKind;
  detail: string;
}


/** What a run has spent so far, checked against its budget before every model call. */
export class BudgetMeter {
  steps = 0;
  usage: TokenUsage = ZERO_USAGE;
  /** Null once any turn could not be priced. */
  costUsd: number | null = 0;

  constructor(
    readonly budget: TicketBudget,
    private readonly startedAt: number,
    private readonly now: () => number,
  ) {}

  record(usage: TokenUsage, cost: number | null): void {
    this.steps += 1;
    this.spend(usage, cost);
  }

  /** Tokens and dollars of a turn counted apart from its step: an agent CLI's turns, whose steps are counted as they come. */
  spend(usage: TokenUsage, cost: number | null): void {
    this.usage = addUsage(this.usage, usage);
    this.costUsd = this.costUsd === null || cost === null ? null : this.costUsd + cost;
  }

  elapsedMs(): number {
    return this.now() - this.startedAt;
  }

  /** The first budget that is used up, or null while all have room for another step. */
  exceeded(): BudgetExceeded | null {
    const { steps, tokens, minutes, usd } = this.budget;
    if (this.steps >= steps) return { which: 'steps', detail: `${this.steps} of ${steps} steps used` };
    const used = totalTokens(this.usage);
    if (used >= tokens) return { which: 'tokens', detail: `${used} of ${tokens} tokens used` };
    if (this.elapsedMs() >= minutes * 60_000) return { which: 'minutes', detail: `${minutes} minute limit reached` };
    if (usd !== undefined && this.costUsd !== null && this.costUsd >= usd) {
      return { which: 'usd', detail: `$${this.costUsd.toFixed(4)} of $${usd} spent` };
    }
    return null;
  }
}
