import type { Parser } from 'web-tree-sitter';
import { withSyntaxTree, type SyntaxNode } from './parser.js';
import { changeDirectory, cloneState, mergeStates, type ShellState } from './state.js';
import { evaluateArgument, evaluateWord, unknownValue, visitSubstitutions, type VariableValue, type WordScope, type WordValue } from './words.js';
import { applyBuiltin, type BuiltinContext } from './builtins.js';
import { arithmeticNamesVariables, arithmeticTextRuns, evaluatingExpansionInText, expansionRuns, INTEGER_VARIABLES, nameRuns, sensitiveVariable, substitutionsInText, withoutLineContinuations } from './hazards.js';
import { readRedirects } from './redirects.js';
import type { AnalyseOptions, Redirect, ShellAnalysis } from './types.js';
import { unwrapCommand } from './wrappers.js';

export type { AnalyseOptions, Redirect, ShellAnalysis, SimpleCommand } from './types.js';

// One walker over bash's syntax tree, and one file: every construct changes the same
// state (directories, variables, functions, a cd's outcome) that the next construct
// reads, so splitting the walk would only spread that state across modules.

export const MAX_SCRIPT_LENGTH = 20_000;
const MAX_DEPTH = 6;
/** Wrappers that run their command in the current shell, so its `cd` or `read` stays. */
const SAME_SHELL = new Set(['command', 'builtin', 'time']);
const MAX_VARIANTS = 32;

/** Whitespace bash keeps inside a word but the grammar splits on, and spaces that only look like spaces. */
const DECEPTIVE_SPACE = /[\r\v\f\u0085\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/u;

/**
 * Every simple command a bash script runs, with what it opens, found from the syntax
 * tree: lists, pipelines, subshells, groups, substitutions, function bodies, loops,
 * branches, heredocs, and the commands that wrappers and `bash -c` run.
 */
export function analyseScript(parser: Parser, script: string, options: AnalyseOptions): ShellAnalysis {
  const analysis: ShellAnalysis = { commands: [], problems: [] };
  const maxLength = options.maxLength ?? MAX_SCRIPT_LENGTH;
  if (script.length > maxLength) {
    analysis.problems.push(`the command is longer than ${maxLength} characters`);
    return analysis;
  }
  const walker = new Walker(parser, options, analysis);
  walker.script(script, walker.initialState(options.cwd), [], 0);
  return analysis;
}

class Walker {
  constructor(
    private readonly parser: Parser,
    private readonly options: AnalyseOptions,
    private readonly analysis: ShellAnalysis,
  ) {}

  initialState(cwd: string): ShellState {
    const vars = new Map<string, VariableValue>();
    for (const [name, value] of Object.entries(this.options.env)) vars.set(name, [{ text: value, glob: null }]);
    return { cwds: [cwd], vars, dirStack: [], functions: new Set(), integers: new Set(INTEGER_VARIABLES) };
  }

  /**
   * Every assignment (plain, declared, a loop variable, a command's prefix) goes through
   * here. A prefix `GIT_*` is left to the git hazard, which denies it for that command.
   */
  assigns(name: string, prefix = false): void {
    if (prefix && name.startsWith('GIT_')) return;
    const sensitive = sensitiveVariable(name);
    if (sensitive !== null) this.problem(sensitive);
  }

  /**
   * A value assigned to an integer variable (bash's `OPTIND`, `RANDOM`, …, or one the
   * script declared `-i`) is evaluated as arithmetic: only numbers are known harmless.
   */
  integerAssigned(name: string, values: WordValue[] | null, state: ShellState): void {
    if (!state.integers.has(name)) return;
    if (values === null || values.some((value) => (value.unknown !== undefined && !value.numeric) || (value.unknown === undefined && arithmeticTextRuns(value.text)))) {
      this.problem(`a value assigned to ${name}, an integer variable, is evaluated as arithmetic, which can run code`);
    }
  }

  problem(text: string): void {
    if (!this.analysis.problems.includes(text)) this.analysis.problems.push(text);
  }

  script(source: string, state: ShellState, via: string[], depth: number): ShellState {
    if (depth > MAX_DEPTH) {
      this.problem('commands nest deeper than the guard follows');
      return state;
    }
    if (DECEPTIVE_SPACE.test(source)) {
      this.problem('the command holds a carriage return, vertical tab, form feed or an unusual space, which the parser and bash split differently');
    }
    const outer = this.visited;
    this.visited = new Set();
    try {
      return withSyntaxTree(this.parser, withoutLineContinuations(this.parser, source), (root) => {
        if (root.hasError) this.problem('the command does not parse as bash');
        const after = this.statements(root.namedChildren, state, via, depth);
        this.sweepSubstitutions(root, via, depth);
        return after;
      });
    } finally {
      this.visited = outer;
    }
  }

  /** Ids of the substitution nodes of the current tree that were analysed where they run. */
  private visited = new Set<number>();

  /**
   * Every command or process substitution runs, wherever it sits (a `case` pattern, a
   * subscript, a default value). One the walk did not reach is still analysed, from an
   * unknown directory, and the call is marked as not fully understood.
   */
  sweepSubstitutions(root: SyntaxNode, via: string[], depth: number): void {
    // Text that bash would run as a substitution but the grammar left as a word.
    // A `regex` (`[[ a =~ … ]]`, the pattern of `${x/…/y}` and `${x#…}`) is expanded by bash but left as text.
    for (const node of root.descendantsOfType(['word', 'string_content', 'expansion', 'concatenation', 'regex'])) {
      if (node === null || insideQuotedData(node)) continue;
      if (['word', 'string_content', 'regex'].includes(node.type) && evaluatingExpansionInText(node.text)) this.problem('a `${…}` the parser did not recognise evaluates text as code');
      if (node.descendantsOfType(['command_substitution', 'process_substitution']).length > 0) continue;
      if (/(^|[^\\])(`|\$\()/.test(node.text)) this.problem('a substitution the parser did not recognise');
    }
    // `${x@P}`, `${!x}`, `${a[i]}`, `${v:o}` and `$((x))` evaluate text as code wherever
    // they sit: a `[[ ]]`, a case pattern, a here-string, a default value, a heredoc.
    for (const node of root.descendantsOfType('expansion')) {
      if (node !== null && !insideLiteralHeredoc(node) && expansionRuns(node)) this.problem(`\`${node.text.slice(0, 40)}\` evaluates text in a way that can run code`);
    }
    for (const node of root.descendantsOfType('arithmetic_expansion')) {
      if (node !== null && !insideLiteralHeredoc(node) && arithmeticNamesVariables(node)) this.problem('arithmetic on variables can run code the guard cannot see');
    }
    for (const node of root.descendantsOfType(['command_substitution', 'process_substitution'])) {
      if (node === null || this.visited.has(node.id)) continue;
      let parent = node.parent;
      let inside = false;
      while (parent !== null) {
        if (this.visited.has(parent.id)) inside = true;
        parent = parent.parent;
      }
      if (inside) continue;
      this.problem('a substitution sits where the guard does not follow the script');
      const state: ShellState = { ...this.initialState(this.options.cwd), cwds: [null] };
      this.visited.add(node.id);
      this.statements(node.namedChildren, state, [...via, '$()'], depth);
    }
  }

  statements(nodes: (SyntaxNode | null)[], state: ShellState, via: string[], depth: number): ShellState {
    let current = state;
    for (const node of nodes) if (node !== null) current = settled(this.statement(node, current, via, depth));
    return current;
  }

  statement(node: SyntaxNode, state: ShellState, via: string[], depth: number): ShellState {
    switch (node.type) {
      case 'comment':
        return state;
      case 'program':
      case 'compound_statement':
      case 'do_group':
        return this.statements(node.namedChildren, state, via, depth);
      case 'subshell':
        this.statements(node.namedChildren, cloneState(state), via, depth);
        return state;
      case 'list':
        return this.sequence(node, state, via, depth, (right, before) => this.statement(right, before, via, depth));
      case 'pipeline':
        return this.pipeline(node.namedChildren.filter((part): part is SyntaxNode => part !== null && part.type !== 'comment'), [], state, via, depth);
      case 'negated_command':
        return this.statements(node.namedChildren, state, via, depth);
      case 'redirected_statement':
        return this.redirected(node, state, via, depth);
      case 'command':
        return this.command(node, [], state, via, depth);
      case 'variable_assignment':
        return this.assign([node], state);
      case 'variable_assignments':
        return this.assign(node.namedChildren, state);
      case 'declaration_command':
        return this.declaration(node, state);
      case 'unset_command': {
        // `unset 'a[$(cmd)]'` evaluates the subscript: each name is judged as the builtin's.
        const scope = this.scope(state, via, depth);
        const args = node.namedChildren.flatMap((child) => (child === null ? [] : child.type === 'variable_name' ? [{ text: child.text, glob: null }] : evaluateWord(child, scope)));
        return applyBuiltin('unset', args, state, this.builtinContext(via, depth)) ?? state;
      }
      case 'test_command':
        // [[ a -eq b ]] evaluates both sides as arithmetic; -v evaluates a subscript.
        if (node.descendantsOfType('test_operator').some((op) => op !== null && /^-(eq|ne|lt|le|gt|ge|v)$/.test(op.text))) {
          this.problem('arithmetic on variables can run code the guard cannot see');
        }
        this.substitutionsIn(node, state, via, depth);
        return state;
      case 'function_definition': {
        // Judge the body where it is defined, as if it ran; a call is judged as unknown.
        const body = node.childForFieldName('body');
        if (body !== null) this.statement(body, cloneState(state), [...via, 'function'], depth);
        const next = cloneState(state);
        const name = node.childForFieldName('name')?.text;
        if (name !== undefined) next.functions.add(name);
        return next;
      }
      case 'file_redirect':
        // `$(<file)` reads the file: a bare redirection.
        this.emit({ args: [], cwds: state.cwds, assignments: new Map(), redirects: this.redirects([node], state, via, depth, []), via, source: node.text });
        return state;
      case 'if_statement':
      case 'elif_clause':
      case 'else_clause':
        return this.branches(node, state, via, depth);
      case 'while_statement':
      case 'until_statement': {
        // A loop's second pass starts from what its first pass set, so it is walked twice.
        const condition = node.childForFieldName('condition');
        const body = node.childForFieldName('body');
        let current = state;
        const seen: ShellState[] = [state];
        for (let pass = 0; pass < 2; pass++) {
          const afterCondition = condition ? this.statement(condition, current, via, depth) : current;
          const afterBody = body ? this.statement(body, afterCondition, via, depth) : afterCondition;
          seen.push(afterCondition, afterBody);
          current = mergeStates(seen);
        }
        return current;
      }
      case 'for_statement':
        return this.forLoop(node, state, via, depth);
      case 'c_style_for_statement': {
        this.problem('arithmetic on variables can run code the guard cannot see');
        this.substitutionsIn(node, state, via, depth);
        const body = node.childForFieldName('body');
        const afterBody = body ? this.statement(body, state, via, depth) : state;
        return mergeStates([state, afterBody]);
      }
      case 'case_statement': {
        const value = node.childForFieldName('value');
        if (value) this.substitutionsIn(value, state, via, depth);
        for (const item of node.namedChildren) {
          if (item?.type !== 'case_item') continue;
          for (const pattern of item.childrenForFieldName('value')) if (pattern) this.substitutionsIn(pattern, state, via, depth);
        }
        const results = [state];
        let fallingFrom: ShellState | null = null;
        for (const item of node.namedChildren) {
          if (item?.type !== 'case_item') continue;
          const body = item.namedChildren.filter((child) => child !== null && !item.childrenForFieldName('value').some((v) => v?.id === child.id));
          // `;&` and `;;&` carry on into the next item with what this one set.
          const start: ShellState = fallingFrom === null ? state : mergeStates([state, fallingFrom]);
          const after = this.statements(body, start, via, depth);
          results.push(after);
          fallingFrom = item.children.some((child) => child?.type === ';&' || child?.type === ';;&') ? after : null;
        }
        return mergeStates(results);
      }
      case 'ERROR':
        // The parse failed here (already a problem): still look inside, so a deny rule can see what it holds.
        return this.statements(node.namedChildren, state, via, depth);
      default:
        this.problem(`the guard does not analyse \`${node.type}\` constructs`);
        this.substitutionsIn(node, state, via, depth);
        return state;
    }
  }

  /**
   * `left && right`, `left || right`: right runs after left, in the directory a `cd` in
   * left leaves for that operator (`cd x && a` runs a in x, `cd x || b` where it was).
   */
  sequence(node: SyntaxNode, state: ShellState, via: string[], depth: number, right: (node: SyntaxNode, before: ShellState) => ShellState): ShellState {
    const children = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment');
    const [left, last] = [children[0], children[children.length - 1]];
    if (left === undefined || last === undefined) return state;
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.type;
    const afterLeft = this.statement(left, state, via, depth);
    if (last === left) return afterLeft;
    const outcome = afterLeft.outcome;
    const before = outcome === undefined ? afterLeft : { ...cloneState(afterLeft), cwds: operator === '||' ? outcome.failure : outcome.success };
    return settled(mergeStates([afterLeft, right(last, before)]));
  }

  /**
   * Each part of a pipeline runs in a subshell: nothing it sets survives. The grammar
   * reads `a && b | c` as `(a && b) | c`; bash reads it as `a && (b | c)`, so a leading
   * list is taken apart and its last command joins the pipeline.
   */
  pipeline(parts: SyntaxNode[], firstRedirects: SyntaxNode[], state: ShellState, via: string[], depth: number): ShellState {
    const [first, ...rest] = parts;
    if (first === undefined) return state;
    let head = first;
    let redirects = firstRedirects;
    if (head.type === 'redirected_statement' && head.childForFieldName('body')?.type === 'list') {
      const body = head.childForFieldName('body')!;
      redirects = [...head.namedChildren.filter((child): child is SyntaxNode => child !== null && child.id !== body.id), ...redirects];
      head = body;
    }
    if (head.type === 'list') {
      return this.sequence(head, state, via, depth, (last, before) => {
        this.pipeline([last, ...rest], redirects, before, via, depth);
        return before;
      });
    }
    this.withRedirects(head, redirects, cloneState(state), via, depth);
    for (const part of rest) this.statement(part, cloneState(state), via, depth);
    return state;
  }

  branches(node: SyntaxNode, state: ShellState, via: string[], depth: number): ShellState {
    // Conditions run in order; each branch starts from after its condition, and any
    // one of them (or none) is what ran.
    let afterCondition = state;
    let inBody = node.type === 'else_clause';
    let body: ShellState | null = inBody ? state : null;
    const results: ShellState[] = [];
    for (const child of node.children) {
      if (child === null) continue;
      if (child.type === 'then') {
        inBody = true;
        body = afterCondition;
      } else if (child.type === 'elif_clause' || child.type === 'else_clause') {
        results.push(this.statement(child, afterCondition, via, depth));
      } else if (child.isNamed) {
        if (inBody) body = this.statement(child, body!, via, depth);
        else afterCondition = this.statement(child, afterCondition, via, depth);
      }
    }
    if (body !== null) results.push(body);
    // Without an else, no branch may run; an else clause itself always runs its body.
    if (node.type !== 'else_clause' && !node.children.some((child) => child?.type === 'else_clause')) results.push(afterCondition);
    return mergeStates(results);
  }

  forLoop(node: SyntaxNode, state: ShellState, via: string[], depth: number): ShellState {
    const variable = node.childForFieldName('variable')?.text;
    const values = node.childrenForFieldName('value');
    // A loop variable is assigned like any other: `for PATH in src` changes what runs.
    if (variable !== undefined) this.assigns(variable);
    const next = cloneState(state);
    if (variable !== undefined) {
      if (values.length === 0) {
        this.integerAssigned(variable, null, state);
        next.vars.set(variable, null);
      }
      else {
        const all = values.flatMap((value) => (value ? evaluateWord(value, this.scope(state, via, depth)) : []));
        this.integerAssigned(variable, all, state);
        next.vars.set(variable, all.some((v) => v.unknown !== undefined) ? null : all);
      }
    }
    const body = node.childForFieldName('body');
    if (body === null) return mergeStates([state, next]);
    // The second pass starts from what the first pass set.
    const first = this.statement(body, next, via, depth);
    const secondStart = cloneState(mergeStates([next, first]));
    if (variable !== undefined) secondStart.vars.set(variable, next.vars.get(variable) ?? null);
    const second = this.statement(body, secondStart, via, depth);
    return mergeStates([state, first, second]);
  }

  redirected(node: SyntaxNode, state: ShellState, via: string[], depth: number): ShellState {
    const body = node.childForFieldName('body');
    const redirects = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.id !== body?.id);
    if (body === null) {
      // A bare redirection (`> file`) opens its file all the same.
      this.emit({ args: [], cwds: state.cwds, assignments: new Map(), redirects: this.redirects(redirects, state, via, depth, []), via, source: node.text });
      return state;
    }
    return this.withRedirects(body, redirects, state, via, depth);
  }

  /**
   * Bash binds trailing redirections to the last command of a list or pipeline
   * (`cd src && echo x > f` writes src/f); the grammar hangs them on the whole list,
   * so they are carried down to where bash applies them.
   */
  withRedirects(body: SyntaxNode, redirects: SyntaxNode[], state: ShellState, via: string[], depth: number): ShellState {
    if (body.type === 'command') return this.command(body, redirects, state, via, depth);
    if (body.type === 'redirected_statement') {
      const inner = body.childForFieldName('body');
      const own = body.namedChildren.filter((child): child is SyntaxNode => child !== null && child.id !== inner?.id);
      return inner ? this.withRedirects(inner, [...own, ...redirects], state, via, depth) : state;
    }
    if (body.type === 'list') return this.sequence(body, state, via, depth, (last, before) => this.withRedirects(last, redirects, before, via, depth));
    if (body.type === 'pipeline') {
      const children = body.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment');
      const last = children[children.length - 1];
      if (last === undefined) return state;
      // The trailing redirections belong to the pipeline's last command.
      if (children.length === 1) return this.withRedirects(last, redirects, state, via, depth);
      this.pipeline(children.slice(0, -1), [], state, via, depth);
      this.withRedirects(last, redirects, cloneState(state), via, depth);
      return state;
    }
    // Redirections around a compound command apply to all of it: judge them as a bare redirection.
    const after = this.statement(body, state, via, depth);
    this.emit({ args: [], cwds: state.cwds, assignments: new Map(), redirects: this.redirects(redirects, state, via, depth, []), via, source: body.text });
    return after;
  }

  scope(state: ShellState, via: string[], depth: number): WordScope {
    const cwd = state.cwds.length === 1 ? state.cwds[0] : null;
    return {
      lookup: (name) => (name === 'PWD' ? (cwd ? [{ text: cwd, glob: null }] : null) : state.vars.get(name)),
      home: this.options.env.HOME ?? null,
      onSubstitution: (inner) => {
        this.visited.add(inner.id);
        // Inside backquotes, \` starts a nested substitution the grammar does not see.
        if (inner.text.startsWith('`') && inner.text.includes('\\`')) this.problem('nested backquotes hide a command from the parser');
        this.statements(inner.namedChildren, cloneState(state), [...via, inner.type === 'process_substitution' ? '<()' : '$()'], depth);
      },
      onProblem: (text) => this.problem(text),
    };
  }

  /** The outermost command and process substitutions in a node run; the inner ones are walked from there. */
  substitutionsIn(node: SyntaxNode, state: ShellState, via: string[], depth: number): void {
    visitSubstitutions(node, this.scope(state, via, depth));
  }

  assign(nodes: (SyntaxNode | null)[], state: ShellState): ShellState {
    const next = cloneState(state);
    for (const node of nodes) {
      if (node?.type !== 'variable_assignment') continue;
      const nameNode = node.childForFieldName('name');
      const name = nameNode?.text;
      const value = node.childForFieldName('value');
      if (name === undefined) continue;
      if (nameNode?.type === 'subscript') {
        this.problem('an array subscript is arithmetic that can run code the guard cannot see');
        this.substitutionsIn(nameNode, state, [], 0);
        continue;
      }
      this.assigns(name);
      if (value?.type === 'array') {
        this.integerAssigned(name, null, state);
        this.arrayIndexes(value);
        this.substitutionsIn(value, state, [], 0);
        next.vars.set(name, null);
        continue;
      }
      const values = value === null ? [{ text: '', glob: null }] : evaluateWord(value, this.scope(state, [], 0)).map((v) => (v.glob !== null ? { text: v.text, glob: null } : v));
      this.integerAssigned(name, values, state);
      if (node.text.includes('+=') || value === null) {
        next.vars.set(name, value === null ? [{ text: '', glob: null }] : null);
        continue;
      }
      next.vars.set(name, values.some((v) => v.unknown !== undefined) ? null : values);
    }
    return next;
  }

  /** `arr=([i]=x)`: an indexed array's subscripts are arithmetic. */
  arrayIndexes(array: SyntaxNode): void {
    for (const element of array.namedChildren) {
      if (element === null || !element.text.startsWith('[')) continue;
      const close = element.text.indexOf(']=');
      if (close === -1 || arithmeticTextRuns(element.text.slice(1, close))) this.problem('an array subscript is arithmetic that can run code the guard cannot see');
    }
  }

  declaration(node: SyntaxNode, state: ShellState): ShellState {
    // `declare -i n`: what is assigned to n from here on is arithmetic.
    const integer = node.namedChildren.some((child) => child?.type === 'word' && /^-[^-]*i/.test(child.text));
    let declared = state;
    if (integer) {
      declared = cloneState(state);
      for (const child of node.namedChildren) {
        const name = child?.type === 'variable_name' ? child.text : child?.type === 'variable_assignment' ? child.childForFieldName('name')?.text : undefined;
        if (name !== undefined) declared.integers.add(name);
      }
    }
    let next = this.assign(node.namedChildren, declared);
    for (const child of node.namedChildren) {
      if (child?.type === 'variable_name') this.assigns(child.text);
      if (child === null || child.type === 'variable_assignment' || child.type === 'variable_name') continue;
      if (child.type === 'word' && child.text.startsWith('-')) {
        if (/[^rxgp]/.test(child.text.slice(1))) this.problem(`\`${node.text.slice(0, 60)}\` declares names, integers, arrays or functions the guard cannot follow`);
        continue;
      }
      this.problem(`\`${node.text.slice(0, 60)}\` declares a variable the guard cannot follow`);
      next = cloneState(next);
    }
    return next;
  }

  command(node: SyntaxNode, outerRedirects: SyntaxNode[], incoming: ShellState, via: string[], depth: number): ShellState {
    const state = this.assignedByExpansions(node, incoming);
    const scope = this.scope(state, via, depth);
    const assignments = new Map<string, WordValue[]>();
    const words: WordValue[][][] = [];
    const redirectNodes = [...outerRedirects];
    // `.e\<newline>nv` and `.[\e]nv` are one word to bash; the grammar can make them two
    // or more, so adjacent word nodes are read back as one.
    const groups: SyntaxNode[][] = [];
    let previous: SyntaxNode | null = null;
    for (const child of node.namedChildren) {
      if (child === null || child.type === 'comment') continue;
      if (child.type === 'variable_assignment') {
        const name = child.childForFieldName('name')?.text ?? '';
        this.assigns(name, true);
        if (child.childForFieldName('name')?.type === 'subscript') this.problem('an array subscript is arithmetic that can run code the guard cannot see');
        const value = child.childForFieldName('value');
        const values = value ? evaluateWord(value, scope) : [{ text: '', glob: null }];
        this.integerAssigned(name, values, state);
        assignments.set(name, values);
        previous = null;
        continue;
      }
      if (child.type.endsWith('_redirect')) {
        redirectNodes.push(child);
        previous = null;
        continue;
      }
      const word = child.type === 'command_name' ? child.namedChildren[0] ?? null : child;
      const gap = previous === null ? ' ' : gapBetween(node, previous, child);
      if (word !== null && previous !== null && groups.length > 0 && (gap === '' || gap === '\\\n')) groups[groups.length - 1]!.push(word);
      else if (word !== null) groups.push([word]);
      else groups.push([]);
      previous = child;
    }
    this.descriptorVariables(groups, redirectNodes, state);
    for (const group of groups) words.push(group.length === 0 ? [[unknownValue('an empty command name')]] : evaluateArgument(group, scope));
    const extraArgs: WordValue[][] = [];
    const redirects = this.redirects(redirectNodes, state, via, depth, extraArgs);
    words.push(...extraArgs.map((alternatives) => alternatives.map((value) => [value])));
    let variants = cartesian(words);
    if (variants.length > MAX_VARIANTS) {
      this.problem('the command expands to too many variants to check each one');
      variants = variants.slice(0, MAX_VARIANTS);
    }
    const results: ShellState[] = [];
    for (const args of variants) {
      results.push(this.simple({ args, cwds: state.cwds, assignments, redirects, via, source: node.text }, state, depth));
    }
    if (results.length === 1) return results[0]!;
    return results.length === 0 ? state : mergeStates(results);
  }

  /**
   * `{name}>file` assigns the descriptor's number to name; the grammar reads `{name}` as
   * an argument. A subscript there (`{a[i]}>f`) is arithmetic, and the name is assigned.
   */
  descriptorVariables(groups: SyntaxNode[][], redirects: SyntaxNode[], state: ShellState): void {
    for (const redirect of redirects) {
      const group = groups.find((words) => words.length > 0 && words[words.length - 1]!.endIndex === redirect.startIndex);
      if (group === undefined) continue;
      const text = group.map((word) => word.text).join('');
      // Only a name, or a name with a subscript, makes `{…}` a descriptor variable; `{a,b}` is a brace word.
      const name = /^\{([A-Za-z_][A-Za-z0-9_]*(\[[\s\S]*\])?)\}$/.exec(text)?.[1];
      if (name === undefined) continue;
      if (nameRuns(name)) this.problem(`\`${text.slice(0, 40)}\` names a descriptor variable the guard cannot follow (a subscript is arithmetic that can run code)`);
      else {
        this.assigns(name);
        this.integerAssigned(name, [{ text: '10', glob: null }], state);
      }
    }
  }

  /**
   * An unquoted heredoc body expands like a double-quoted string. The grammar misses
   * substitutions in indented and backquoted forms, so they are found in the body's
   * text and each is parsed on its own.
   */
  heredocSubstitutions(body: string, state: ShellState, via: string[], depth: number): void {
    const found = substitutionsInText(body);
    if (found === null) {
      this.problem('a heredoc body holds a substitution the guard cannot delimit');
      return;
    }
    if (found.arithmetic) this.problem('arithmetic on variables can run code the guard cannot see');
    if (evaluatingExpansionInText(body)) this.problem('a heredoc body holds a `${…}` that evaluates text as code (a prompt, a subscript, an indirection)');
    for (const script of found.scripts) this.script(script, cloneState(state), [...via, '$()'], depth + 1);
  }

  /** `${F:=x}` and `${F=x}` assign as they expand: after them the variable is not known. */
  assignedByExpansions(node: SyntaxNode, state: ShellState): ShellState {
    let next = state;
    for (const expansion of node.descendantsOfType('expansion')) {
      const name = expansion?.namedChildren.find((child) => child?.type === 'variable_name')?.text;
      if (name === undefined || !/^\$\{[A-Za-z_][A-Za-z0-9_]*:?=/.test(expansion!.text)) continue;
      this.integerAssigned(name, null, state);
      if (next === state) next = cloneState(state);
      next.vars.set(name, null);
    }
    return next;
  }

  redirects(nodes: SyntaxNode[], state: ShellState, via: string[], depth: number, extraArgs: WordValue[][]): Redirect[] {
    return readRedirects(nodes, this.scope(state, via, depth), extraArgs, {
      problem: (text) => this.problem(text),
      substitutionsIn: (node) => this.substitutionsIn(node, state, via, depth),
      trailing: (nodes) => {
        this.problem('commands follow a heredoc marker on its line, which the parser reads out of order');
        this.statements(nodes, cloneState(state), via, depth);
      },
      heredoc: (body, expands) => {
        // The grammar's own substitution nodes in the body are superseded by the parse of the body.
        for (const inner of body.descendantsOfType(['command_substitution', 'process_substitution'])) if (inner) this.visited.add(inner.id);
        if (expands) this.heredocSubstitutions(body.text, state, via, depth);
      },
    });
  }

  emit(command: { args: WordValue[]; cwds: (string | null)[]; assignments: Map<string, WordValue[]>; redirects: Redirect[]; via: string[]; source: string }): void {
    for (const cwd of command.cwds) {
      this.analysis.commands.push({
        args: command.args,
        cwd,
        assignments: command.assignments,
        redirects: command.redirects,
        via: command.via,
        source: command.source,
      });
    }
  }

  /** One concrete argv: builtins that change the shell's state, wrappers, then the command itself. */
  simple(
    command: { args: WordValue[]; cwds: (string | null)[]; assignments: Map<string, WordValue[]>; redirects: Redirect[]; via: string[]; source: string },
    state: ShellState,
    depth: number,
  ): ShellState {
    this.emit(command);
    const [nameValue, ...rest] = command.args;
    if (nameValue === undefined) return this.withAssignments(state, command.assignments);
    if (nameValue.unknown !== undefined) {
      this.problem(`the command name is not known before it runs (${nameValue.unknown})`);
      return state;
    }
    const name = nameValue.text;
    if (state.functions.has(name)) {
      // The function may do anything by now (cd, set variables): judged where defined, unknown after.
      this.problem(`\`${name}\` calls a shell function, which may differ from what the guard saw where it was defined`);
      return { ...cloneState(state), cwds: [null] };
    }
    const builtin = applyBuiltin(name, rest, state, {
      ...this.builtinContext(command.via, depth),
      runs: (script, label) => this.nested(script, { ...command, via: [...command.via, label] }, state, depth),
    });
    if (builtin !== undefined) return builtin;
    const unwrapped = unwrapCommand(command.args);
    if (unwrapped === null) return state;
    if (unwrapped.problem) this.problem(unwrapped.problem);
    const via = [...command.via, unwrapped.wrapper];
    const assignments = new Map([...command.assignments, ...unwrapped.assignments]);
    for (const name of unwrapped.assignments.keys()) this.assigns(name, true);
    const cwds = unwrapped.cwd ? changeDirectory(state, [unwrapped.cwd], command.cwds) : command.cwds;
    for (const script of unwrapped.scripts) this.nested(script, { cwds, via, assignments }, state, depth);
    // The outer command's redirections were judged with it; the inner one inherits them.
    const results = unwrapped.commands.map((args) => this.simple({ args, cwds, assignments, redirects: [], via, source: command.source }, state, depth));
    // `command cd /etc`, `builtin read F`: these run the builtin in this very shell.
    return SAME_SHELL.has(unwrapped.wrapper) && results.length > 0 ? mergeStates(results) : state;
  }

  builtinContext(via: string[], depth: number): BuiltinContext {
    return {
      home: this.options.env.HOME ?? null,
      problem: (text) => this.problem(text),
      runs: (script, label) => this.script(script, this.initialState(this.options.cwd), [...via, label], depth + 1),
      assigned: (name, values, state) => {
        this.assigns(name);
        this.integerAssigned(name, values, state);
      },
    };
  }

  nested(script: string, command: { cwds: (string | null)[]; via: string[]; assignments: Map<string, WordValue[]> }, state: ShellState, depth: number): void {
    const inner = cloneState(state);
    inner.cwds = command.cwds;
    for (const [name, values] of command.assignments) inner.vars.set(name, values);
    this.script(script, inner, command.via, depth + 1);
  }

  withAssignments(state: ShellState, assignments: Map<string, WordValue[]>): ShellState {
    if (assignments.size === 0) return state;
    const next = cloneState(state);
    for (const [name, values] of assignments) next.vars.set(name, values.some((v) => v.unknown !== undefined) ? null : values);
    return next;
  }
}

/** Every argv the arguments can make: one alternative of each argument, its brace words spliced in. */
function cartesian(words: WordValue[][][]): WordValue[][] {
  let results: WordValue[][] = [[]];
  for (const alternatives of words) {
    const next: WordValue[][] = [];
    for (const prefix of results) for (const spliced of alternatives) next.push([...prefix, ...spliced]);
    results = next;
    if (results.length > MAX_VARIANTS * 4) return results;
  }
  return results;
}

/** The source text between two children of `parent`. */
function gapBetween(parent: SyntaxNode, left: SyntaxNode, right: SyntaxNode): string {
  return parent.text.slice(left.endIndex - parent.startIndex, right.startIndex - parent.startIndex);
}

/** Text in a heredoc body whose delimiter is quoted: it does not expand. */
function insideLiteralHeredoc(node: SyntaxNode): boolean {
  for (let parent = node.parent; parent !== null; parent = parent.parent) {
    if (parent.type !== 'heredoc_redirect') continue;
    const start = parent.namedChildren.find((child) => child?.type === 'heredoc_start')?.text ?? '';
    return /['"\\]/.test(start);
  }
  return false;
}

/** Text in a heredoc body, which is data or was parsed again on its own. */
function insideQuotedData(node: SyntaxNode): boolean {
  for (let parent = node.parent; parent !== null; parent = parent.parent) if (parent.type === 'heredoc_body') return true;
  return false;
}

/** A cd's success and failure only matter to the `&&` or `||` right after it. */
function settled(state: ShellState): ShellState {
  if (state.outcome === undefined) return state;
  const { outcome: _outcome, ...rest } = state;
  return rest;
}
