import type { Parser } from 'web-tree-sitter';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyseScript, type ShellAnalysis, type SimpleCommand } from '../../src/guard/shell/analyse.js';
import { loadBashParser } from '../../src/guard/shell/parser.js';

// The analysis never touches the file system: a made-up root keeps the expectations readable.
const ROOT = '/repo';
const HOME = '/home/me';
const ENV = { HOME, PATH: '/usr/bin:/bin' };

let parser: Parser;
beforeAll(async () => {
  parser = await loadBashParser();
});

function analyse(script: string, maxLength?: number): ShellAnalysis {
  return analyseScript(parser, script, { cwd: ROOT, env: ENV, ...(maxLength === undefined ? {} : { maxLength }) });
}

/** argv as the command receives it; a value not known before the command runs shows as `<unknown>`. */
function argv(command: SimpleCommand): string[] {
  return command.args.map((arg) => (arg.unknown === undefined ? arg.text : '<unknown>'));
}

/** Every simple command of the script as `{argv, cwd}`, in the order the analysis found them. */
function runs(script: string): { argv: string[]; cwd: string | null }[] {
  return analyse(script).commands.map((command) => ({ argv: argv(command), cwd: command.cwd }));
}

/** The commands whose argv[0] is `name`. */
function named(analysis: ShellAnalysis, name: string): SimpleCommand[] {
  return analysis.commands.filter((command) => command.args[0]?.text === name);
}

/** The innermost command a wrapper runs: the one reached through the most wrappers. */
function innermost(analysis: ShellAnalysis): SimpleCommand {
  return [...analysis.commands].sort((a, b) => b.via.length - a.via.length)[0]!;
}

describe('quote removal and escapes', () => {
  it('removes single and double quotes inside a word, as bash does', () => {
    const analysis = analyse(`c'a't .e"nv"`);
    expect(analysis.commands.map(argv)).toEqual([['cat', '.env']]);
    expect(analysis.problems).toEqual([]);
  });

  it('reads a backslash before an ordinary character as that character', () => {
    expect(runs('\\cat .e\\nv')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
  });

  it("decodes ANSI-C strings ($'\\x63at', octal escapes)", () => {
    expect(runs("$'\\x63at' $'\\056env'")).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
  });

  it('joins a line continuation inside double quotes', () => {
    expect(runs('cat ".e\\\nnv"')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
  });

  it('keeps a glob active only where its characters are unquoted', () => {
    const [cat] = analyse(`cat *.js '*.md' "?"`).commands;
    expect(cat!.args.map((arg) => arg.glob)).toEqual([null, '*.js', null, null]);
    expect(argv(cat!)).toEqual(['cat', '*.js', '*.md', '?']);
  });
});

describe('variables', () => {
  it('follows a variable set earlier in the script', () => {
    expect(runs('F=.env; cat $F')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
    expect(runs('F=.e; F=${F}nv; cat "$F"')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
  });

  it('follows variables set by export and declare', () => {
    expect(runs('export F=.env; cat $F')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
    expect(runs('declare -x F=.env; cat $F')).toEqual([{ argv: ['cat', '.env'], cwd: ROOT }]);
  });

  it('takes $HOME, ${HOME} and ~ from the environment the command will see', () => {
    expect(runs('cat $HOME/.netrc ${HOME}/.npmrc ~/.pgpass')).toEqual([{ argv: ['cat', `${HOME}/.netrc`, `${HOME}/.npmrc`, `${HOME}/.pgpass`], cwd: ROOT }]);
  });

  it('gives $PWD the directory the shell is in at that point', () => {
    expect(runs('echo $PWD; cd src && echo $PWD ${PWD}')).toEqual([
      { argv: ['echo', ROOT], cwd: ROOT },
      { argv: ['cd', 'src'], cwd: ROOT },
      { argv: ['echo', `${ROOT}/src`, `${ROOT}/src`], cwd: `${ROOT}/src` },
    ]);
  });

  it('gives an unset variable an unknown value, with the reason', () => {
    const [cat] = analyse('cat $NOPE').commands;
    expect(argv(cat!)).toEqual(['cat', '<unknown>']);
    expect(cat!.args[1]!.unknown).toContain('$NOPE');
  });

  it('gives a command substitution an unknown value, and still sees the command inside it', () => {
    const analysis = analyse('cat $(echo .env) `pwd`');
    expect(argv(named(analysis, 'cat')[0]!)).toEqual(['cat', '<unknown>', '<unknown>']);
    expect(named(analysis, 'echo').map((c) => [argv(c), c.via])).toEqual([[['echo', '.env'], ['$()']]]);
    expect(named(analysis, 'pwd').map((c) => c.via)).toEqual([['$()']]);
  });

  it('gives a variable that a substitution or `read` set an unknown value', () => {
    expect(runs('x=$(cat .env); echo $x')).toEqual([
      { argv: ['cat', '.env'], cwd: ROOT },
      { argv: ['echo', '<unknown>'], cwd: ROOT },
    ]);
    expect(runs('F=a; read F; cat $F').at(-1)).toEqual({ argv: ['cat', '<unknown>'], cwd: ROOT });
  });

  it('does not let a prefix assignment change the words of its own command', () => {
    const [cat] = analyse('F=.env cat $F').commands;
    expect(argv(cat!)).toEqual(['cat', '<unknown>']);
    expect(cat!.assignments.get('F')!.map((value) => value.text)).toEqual(['.env']);
  });

  it('gives an unquoted variable that would be split an unknown value, but not a quoted one', () => {
    expect(runs('F="a b"; cat $F "$F"')).toEqual([{ argv: ['cat', '<unknown>', 'a b'], cwd: ROOT }]);
  });

  it('forgets a variable after unset', () => {
    expect(runs('F=x; unset F; cat $F')).toEqual([{ argv: ['cat', '<unknown>'], cwd: ROOT }]);
  });
});

describe('brace expansion', () => {
  it('turns `cat .{env,x}` into two arguments, as bash does', () => {
    expect(runs('cat .{env,x}')).toEqual([{ argv: ['cat', '.env', '.x'], cwd: ROOT }]);
  });

  it('expands braces in the command name too: `c{a,}t .env` runs cat with ct and .env', () => {
    expect(runs('c{a,}t .env').map((run) => run.argv)).toEqual([['cat', 'ct', '.env']]);
  });

  it('keeps a variable that may hold either of two values as two commands', () => {
    expect(runs('if x; then F=a; else F=b; fi; cat $F').filter((run) => run.argv[0] === 'cat').map((run) => run.argv).sort()).toEqual([
      ['cat', 'a'],
      ['cat', 'b'],
    ]);
  });

  it('leaves quoted braces alone', () => {
    expect(runs("cat '.{env,x}'")).toEqual([{ argv: ['cat', '.{env,x}'], cwd: ROOT }]);
  });
});

describe('where each command runs', () => {
  it('carries a cd along a list, and into the next statement wherever a failed cd may have left it', () => {
    expect(runs('cd src && cat x; ls')).toEqual([
      { argv: ['cd', 'src'], cwd: ROOT },
      { argv: ['cat', 'x'], cwd: `${ROOT}/src` },
      { argv: ['ls'], cwd: `${ROOT}/src` },
      { argv: ['ls'], cwd: ROOT },
    ]);
  });

  it('runs what follows `cd dir ||` where the shell was, since it runs only when the cd failed', () => {
    expect(runs('cd test || node --test x.js').at(-1)).toEqual({ argv: ['node', '--test', 'x.js'], cwd: ROOT });
  });

  it('reads `a && b | c` as bash does, with c in the directory a moved to', () => {
    expect(runs('cd src && cat x | tee y').slice(1)).toEqual([
      { argv: ['cat', 'x'], cwd: `${ROOT}/src` },
      { argv: ['tee', 'y'], cwd: `${ROOT}/src` },
    ]);
  });

  it('keeps a cd inside a subshell from leaking out of it', () => {
    expect(runs('(cd src && cat x); ls')).toEqual([
      { argv: ['cd', 'src'], cwd: ROOT },
      { argv: ['cat', 'x'], cwd: `${ROOT}/src` },
      { argv: ['ls'], cwd: ROOT },
    ]);
  });

  it('keeps a cd in a part of a pipeline from leaking out of it', () => {
    expect(runs('cd src | cat; pwd').at(-1)).toEqual({ argv: ['pwd'], cwd: ROOT });
  });

  it('lets a cd inside a { } group change the directory after it', () => {
    expect(runs('{ cd src; }; ls').filter((run) => run.argv[0] === 'ls').map((run) => run.cwd)).toContain(`${ROOT}/src`);
  });

  it('runs what follows a conditional cd in every directory it may be in', () => {
    const cats = runs('if true; then cd /etc; fi; cat x').filter((run) => run.argv[0] === 'cat');
    expect(cats.map((run) => run.cwd).sort()).toEqual(['/etc', ROOT]);
  });

  it('runs what follows `cmd || cd dir` in both directories', () => {
    const lists = runs('true || cd src; ls').filter((run) => run.argv[0] === 'ls');
    expect(lists.map((run) => run.cwd).sort()).toEqual([ROOT, `${ROOT}/src`]);
  });

  it('follows cd through a loop over known values', () => {
    const lists = runs('for d in a b; do cd $d; done; ls').filter((run) => run.argv[0] === 'ls');
    // A second pass starts where the first left off: a/b and b/a are possible too.
    expect(lists.map((run) => run.cwd)).toEqual(expect.arrayContaining([ROOT, `${ROOT}/a`, `${ROOT}/b`, `${ROOT}/a/b`]));
  });

  it('goes home on a bare cd and takes a variable as the target', () => {
    expect(runs('cd && ls').at(-1)).toEqual({ argv: ['ls'], cwd: HOME });
    expect(runs('D=src; cd $D && pwd').at(-1)).toEqual({ argv: ['pwd'], cwd: `${ROOT}/src` });
  });

  it('does not know the directory after a cd to an unknown place', () => {
    expect(runs('cd $X && ls').at(-1)).toEqual({ argv: ['ls'], cwd: null });
    expect(runs('cd - && ls').at(-1)).toEqual({ argv: ['ls'], cwd: null });
  });
});

describe('pipelines and lists', () => {
  it('finds every command of a pipeline and of an && / || list', () => {
    expect(runs('ls | grep x && echo y || echo z').map((run) => run.argv)).toEqual([['ls'], ['grep', 'x'], ['echo', 'y'], ['echo', 'z']]);
  });

  it('finds commands in loop conditions, case branches and negations', () => {
    const names = analyse('while test -f x; do sleep 1; done; case $v in a) touch a;; esac; ! grep q f').commands.map((c) => c.args[0]!.text);
    expect([...new Set(names)]).toEqual(['test', 'sleep', 'touch', 'grep']);
  });
});

describe('redirections', () => {
  it('binds a trailing redirection to the last command of a list, in its directory', () => {
    const analysis = analyse('cd src && echo x > f');
    const [echo] = named(analysis, 'echo');
    expect(echo!.cwd).toBe(`${ROOT}/src`);
    expect(echo!.redirects.map((r) => ({ operator: r.operator, access: r.access, targets: r.targets.map((t) => t.text) }))).toEqual([{ operator: '>', access: 'write', targets: ['f'] }]);
    expect(named(analysis, 'cd')[0]!.redirects).toEqual([]);
  });

  it('binds a trailing redirection to the last command of a pipeline', () => {
    const analysis = analyse('cd src && ls | tee a > b');
    expect(named(analysis, 'ls')[0]!.redirects).toEqual([]);
    const [tee] = named(analysis, 'tee');
    expect(tee!.cwd).toBe(`${ROOT}/src`);
    expect(tee!.redirects.flatMap((r) => r.targets.map((t) => t.text))).toEqual(['b']);
  });

  it('reports a bare redirection as a command with no argv that writes its file', () => {
    const analysis = analyse('> f');
    expect(analysis.commands).toHaveLength(1);
    expect(analysis.commands[0]!.args).toEqual([]);
    expect(analysis.commands[0]!.redirects.map((r) => [r.operator, r.access, r.targets.map((t) => t.text)])).toEqual([['>', 'write', ['f']]]);
  });

  it('opens the redirection of a { } group in the directory before the group runs', () => {
    const bare = analyse('{ cd src; echo x; } > f').commands.find((c) => c.args.length === 0);
    expect(bare!.cwd).toBe(ROOT);
    expect(bare!.redirects.flatMap((r) => r.targets.map((t) => t.text))).toEqual(['f']);
  });

  it('tells reads from writes, and a descriptor copy opens nothing', () => {
    const [cat] = analyse('cat < in > out 2>&1 >> log').commands;
    expect(cat!.redirects.map((r) => [r.operator, r.access, r.targets.map((t) => t.text)])).toEqual([
      ['<', 'read', ['in']],
      ['>', 'write', ['out']],
      ['>&', 'none', []],
      ['>>', 'write', ['log']],
    ]);
  });

  it('gives words after a redirection to the command, as bash does', () => {
    expect(runs('echo x >f extra')).toEqual([{ argv: ['echo', 'x', 'extra'], cwd: ROOT }]);
  });
});

describe('heredocs, herestrings and process substitution', () => {
  it('runs the substitutions in a heredoc body and keeps the redirection after it', () => {
    const analysis = analyse('cat <<EOF > f\n$(id)\nEOF');
    expect(named(analysis, 'id').map((c) => c.via)).toEqual([['$()']]);
    const [cat] = named(analysis, 'cat');
    expect(cat!.redirects.map((r) => [r.operator, r.access, r.targets.map((t) => t.text)])).toEqual([
      ['<<', 'none', []],
      ['>', 'write', ['f']],
    ]);
  });

  it.each([`'EOF'`, `"EOF"`, '\\EOF'])('treats the body as data when the delimiter is quoted (%s)', (delimiter) => {
    const analysis = analyse(`cat <<${delimiter} > f\n$(id)\nEOF`);
    expect(named(analysis, 'id')).toEqual([]);
    expect(named(analysis, 'cat')[0]!.redirects.flatMap((r) => r.targets.map((t) => t.text))).toEqual(['f']);
  });

  it('runs the substitutions of a herestring', () => {
    expect(named(analyse('cat <<< "$(id)"'), 'id')).toHaveLength(1);
  });

  it('runs the command of a process substitution and passes the command a pipe', () => {
    const analysis = analyse('cat <(ls) f');
    expect(named(analysis, 'ls').map((c) => c.via)).toEqual([['<()']]);
    expect(argv(named(analysis, 'cat')[0]!)).toEqual(['cat', '/dev/fd/63', 'f']);
  });
});

describe('wrappers', () => {
  it.each([
    ['env cat .env', 'env'],
    ['env -i A=1 cat .env', 'env'],
    ['command cat .env', 'command'],
    ['builtin cat .env', 'builtin'],
    ['exec cat .env', 'exec'],
    ['nice -n 5 cat .env', 'nice'],
    ['nice -5 cat .env', 'nice'],
    ['nohup cat .env', 'nohup'],
    ['timeout 5 cat .env', 'timeout'],
    ['timeout -s KILL -k 5 10 cat .env', 'timeout'],
    ['time cat .env', 'time'],
    ['time -p cat .env', 'time'],
    ['stdbuf -oL cat .env', 'stdbuf'],
    ['stdbuf -o L cat .env', 'stdbuf'],
    ['setsid cat .env', 'setsid'],
    ['watch cat .env', 'watch'],
    ['watch -n 1 "cat .env"', 'watch'],
    ['sudo cat .env', 'sudo'],
    ['sudo -u root cat .env', 'sudo'],
    ['env -S "cat .env"', 'env'],
    ["bash -c 'cat .env'", 'bash -c'],
    ["sh -ec 'cat .env'", 'sh -c'],
  ])('`%s` runs cat .env', (script, wrapper) => {
    const analysis = analyse(script);
    const inner = innermost(analysis);
    expect(argv(inner)).toEqual(['cat', '.env']);
    expect(inner.cwd).toBe(ROOT);
    expect(inner.via).toEqual([wrapper]);
    // The wrapper itself is reported too, so rules about it still apply.
    expect(analysis.commands[0]!.via).toEqual([]);
  });

  it('keeps the variables `env` sets for the command it runs', () => {
    const inner = innermost(analyse('env -i A=1 cat .env'));
    expect(inner.assignments.get('A')!.map((value) => value.text)).toEqual(['1']);
  });

  it('runs the command of `env -C dir` in that directory', () => {
    expect(innermost(analyse('env -C src cat x')).cwd).toBe(`${ROOT}/src`);
  });

  it('does not unwrap `command -v`, which runs nothing', () => {
    expect(runs('command -v cat')).toEqual([{ argv: ['command', '-v', 'cat'], cwd: ROOT }]);
  });

  it('gives the command xargs runs an argument read from its input', () => {
    const inner = innermost(analyse('echo hi | xargs -n 1 rm -f'));
    expect(argv(inner)).toEqual(['rm', '-f', '<unknown>']);
    expect(inner.via).toEqual(['xargs']);
    expect(argv(innermost(analyse('xargs -I {} cat {}')))).toEqual(['cat', '<unknown>']);
  });

  it('unwraps find -exec for both `;` and `+`, with the found file standing for all of the root', () => {
    for (const script of ['find src -exec cat {} +', 'find src -name x -exec cat {} \\;']) {
      const inner = innermost(analyse(script));
      expect(argv(inner)).toEqual(['cat', 'src']);
      expect(inner.args[1]!.subtree).toBe(true);
      expect(inner.via).toEqual(['find -exec']);
    }
  });

  it('follows shells nested in shells', () => {
    const analysis = analyse(`bash -c "sh -c 'cat .env'"`);
    expect(analysis.commands.map((c) => [argv(c), c.via])).toEqual([
      [['bash', '-c', "sh -c 'cat .env'"], []],
      [['sh', '-c', 'cat .env'], ['bash -c']],
      [['cat', '.env'], ['bash -c', 'sh -c']],
    ]);
    expect(analysis.problems).toEqual([]);
  });

  it('follows a shell inside find -exec', () => {
    const inner = innermost(analyse("find . -name x -exec sh -c 'cat .env' \\;"));
    expect(argv(inner)).toEqual(['cat', '.env']);
    expect(inner.via).toEqual(['find -exec', 'sh -c']);
  });

  it('reports a script that nests shells too deep to follow', () => {
    const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
    let script = 'ls';
    for (let i = 0; i < 8; i++) script = `bash -c ${quote(script)}`;
    expect(analyse(script).problems).toContain('commands nest deeper than the guard follows');
  });

  it('peels git global options and runs the subcommand where -C points', () => {
    const inner = innermost(analyse('git -C src -c a=b --no-pager log'));
    expect(argv(inner)).toEqual(['git', 'log']);
    expect(inner.cwd).toBe(`${ROOT}/src`);
    expect(inner.via).toEqual(['git']);
  });

  it('joins several git -C options as git does', () => {
    expect(innermost(analyse('git -C src -C ../lib log')).cwd).toBe(`${ROOT}/lib`);
  });

  it('leaves a plain git command as it is', () => {
    expect(analyse('git status').commands.map((c) => [argv(c), c.via])).toEqual([[['git', 'status'], []]]);
  });
});

describe('what the analysis cannot vouch for', () => {
  it('parses the literal text of eval, and still reports eval as a problem', () => {
    const analysis = analyse('eval "cat .env"');
    const inner = innermost(analysis);
    expect(argv(inner)).toEqual(['cat', '.env']);
    expect(inner.via).toEqual(['eval']);
    expect(analysis.problems).toEqual(['`eval` runs text the guard can only guess at']);
  });

  it('reports eval of an unknown string as a problem', () => {
    const analysis = analyse('eval $X');
    expect(analysis.commands.map(argv)).toEqual([['eval', '<unknown>']]);
    expect(analysis.problems).toEqual(['`eval` runs text the guard can only guess at']);
  });

  it('reports a script that does not parse, and still looks inside it', () => {
    const analysis = analyse('cat .env (');
    expect(analysis.problems).toContain('the command does not parse as bash');
    expect(analysis.commands.some((c) => c.args[0]?.text === 'cat')).toBe(true);
  });

  it.each([
    ['a carriage return', 'cat\r.env'],
    ['a vertical tab', 'cat\v.env'],
    ['a form feed', 'cat\f.env'],
    ['a no-break space', 'cat\u00a0.env'],
  ])('reports %s in a command, which bash and the parser split differently', (_what, script) => {
    expect(analyse(script).problems).toEqual([expect.stringContaining('carriage return, vertical tab, form feed or an unusual space')]);
  });

  it('does not analyse a script over the size bound at all', () => {
    const script = `echo ${'x'.repeat(100)}`;
    expect(analyse(script, 50)).toEqual({ commands: [], problems: ['the command is longer than 50 characters'] });
    expect(analyse(`echo ${'x'.repeat(20_001)}`).problems).toEqual(['the command is longer than 20000 characters']);
    expect(analyse(script, 200).problems).toEqual([]);
  });

  it('reports an unknown command name as a problem', () => {
    expect(analyse('$CMD .env').problems).toEqual([expect.stringContaining('the command name is not known before it runs')]);
  });

  it("analyses a function's body where it is defined", () => {
    const analysis = analyse('f() { rm -rf x; }; f');
    expect(analysis.commands.map((c) => [argv(c), c.via])).toEqual([
      [['rm', '-rf', 'x'], ['function']],
      [['f'], []],
    ]);
  });

  it('gives the loop variable of `while read` an unknown value', () => {
    const seen = runs('while read f; do rm $f; done').map((run) => JSON.stringify(run));
    expect([...new Set(seen)].map((run) => JSON.parse(run))).toEqual([
      { argv: ['read', 'f'], cwd: ROOT },
      { argv: ['rm', '<unknown>'], cwd: ROOT },
    ]);
  });

  it('gives an arithmetic expansion an unknown value', () => {
    expect(runs('cat $((1+2))')).toEqual([{ argv: ['cat', '<unknown>'], cwd: ROOT }]);
  });
});

// Each row was checked with bash 5.2: the payload's command substitution runs there.
// A payload `a[$(id)]` in a name or an arithmetic value is a subscript bash expands.
describe('places where bash evaluates a name or a value as code', () => {
  it.each([
    // Names: unset, wait -p, the declaration builtins however they are reached.
    [`unset 'a[$(id)]'`],
    [`unset -v "a[\\$(id)]"`],
    [`f=$(cat list); unset $f`],
    [`command unset 'a[$(id)]'`],
    [`builtin unset -v 'a[$(id)]'`],
    [`time unset 'a[$(id)]'`],
    [`\\unset 'a[$(id)]'`],
    [`wait -n -p 'a[$(id)]'`],
    [`wait -np 'a[$(id)]'`],
    [`wait -fnp'a[$(id)]'`],
    [`command wait -n -p 'a[$(id)]'`],
    [`command declare 'a[$(id)]=1'`],
    [`builtin typeset 'a[$(id)]=1'`],
    [`f() { command local 'a[$(id)]=1'; }`],
    [`"declare" 'a[$(id)]=1'`],
    [`builtin export 'a[$(id)]'`],
    [`command readonly 'a[$(id)]'`],
    [`command declare -i n; n=1`],
    [`printf -v 'a[$(id)]' x`],
    [`printf '-va[$(id)]' x`],
    [`command test -v 'a[$(id)]'`],
    [`builtin [ -v 'a[$(id)]' ]`],
    [`let 'a[$(id)]'`],
    [`command let x=1`],
    [`compgen -W '$(id)'`],
    [`compgen -o default -C id x`],
    // Values of integer variables, however they are assigned.
    [`OPTIND='a[$(id)]'`],
    [`RANDOM='a[$(id)]'`],
    [`SRANDOM='a[$(id)]'`],
    [`HISTCMD='a[$(id)]'`],
    [`SECONDS='a[$(id)]'`],
    [`OPTIND+='a[$(id)]'`],
    [`x='a[$(id)]'; OPTIND=$x`],
    [`OPTIND='a[$(id)]' >/dev/null`],
    [`export OPTIND='a[$(id)]'`],
    [`declare RANDOM='a[$(id)]'`],
    [`readonly SRANDOM='a[$(id)]'`],
    [`command export OPTIND='a[$(id)]'`],
    [`builtin readonly RANDOM='a[$(id)]'`],
    [`for OPTIND in 'a[$(id)]'; do :; done`],
    [`select RANDOM in 'a[$(id)]'; do break; done`],
    [`echo 'a[$(id)]' | { read OPTIND; }`],
    [`printf -v RANDOM %s 'a[$(id)]'`],
    [`getopts ab OPTIND`],
    [`: \${OPTIND:='a[$(id)]'}`],
    [`declare -i n; n='a[$(id)]'`],
    // Subscripts the grammar does not show as such.
    [`i='a[$(id)]'; arr=([i]=1)`],
    [`i='a[$(id)]'; arr+=([i]=1)`],
    [`y='a[$(id)]'; echo hi {b[y]}>/dev/null`],
    [`exec {b[y]}>&-`],
  ])('reports %s', (script) => {
    expect(analyse(script).problems).not.toEqual([]);
  });

  it.each([
    [`echo "\${v@P}"`],
    [`echo \${!r@P}`],
    [`echo "\${@@P}"`],
    [`echo \${*@P}`],
    [`echo \${1@P}`],
    [`echo "\${a[0]@P}"`],
    [`echo \${a[@]@P}`],
    [`echo \${u:-\${v@P}}`],
    [`echo "x\${u:+\${v@P}}y"`],
    [`x=\${v@P}`],
    [`x=(\${v@P})`],
    [`case a in \${v@P}) ;; esac`],
    [`case \${v@P} in a) ;; esac`],
    [`echo hi > o\${v@P}`],
    [`cat <<< \${v@P}`],
    [`cat <<< "\${v@P}"`],
    [`[[ \${v@P} ]]`],
    [`[[ a == "\${v@P}" ]]`],
    [`cat <<E\n\${v@P}\nE`],
    [`cat <<E\nx \${u:-\${v@P}}\nE`],
    [`cat <<-E\n\t\${v@P}\n\tE`],
    [`bash -c 'echo \${v@P}'`],
    [`for x in \${v@P}; do :; done`],
    [`local x=\${v@P}`],
    // Other expansions that evaluate text, where the grammar leaves them unjudged.
    [`[[ \${v:o} == x ]]`],
    [`case \${a[i]} in x) ;; esac`],
    [`cat <<< "\${!r}"`],
    [`[[ \${#a[i]} == 1 ]]`],
    [`cat <<E\n\${a[i]}\nE`],
    [`case $((o)) in 1) ;; esac`],
    // A pattern the grammar keeps as text (a `regex` node) is expanded by bash all the same.
    [`[[ a =~ x\${v@P} ]]`],
    [`echo \${x/\${v@P}/y}`],
    [`echo \${x%%\${v@P}}`],
    [`echo \${x#\${a[i]}}`],
    [`[[ x =~ \${a[i]} ]]`],
  ])('reports the prompt or arithmetic expansion in %s', (script) => {
    expect(analyse(script).problems).not.toEqual([]);
  });

  it.each([
    ['unset x'],
    ['unset -f f; unset -v x y'],
    ["unset 'arr[0]'"],
    ['wait'],
    ['sleep 1 & wait $!'],
    ['wait -n'],
    ['local i=0'],
    ['export FOO=bar'],
    ['command export FOO=bar'],
    ['read -r line'],
    ['OPTIND=1'],
    ['OPTIND=1; getopts ab opt'],
    ['RANDOM=42; echo $RANDOM'],
    ['SECONDS=0'],
    ['RANDOM=$$; OPTIND=$#'],
    ['[[ abc =~ ^[a-z]+$ ]] && echo "${BASH_REMATCH[0]}"'],
    ['x=a.js; echo ${x%.js} ${x#*.} ${x/a/b} ${x//./_}'],
    ['for OPTIND in 1 2; do :; done'],
    ['arr=(a b)'],
    ['arr=([0]=a [1]=b)'],
    ["printf -v out '%s' x"],
    ["printf '%s\\n' x"],
    ['echo {a,b}>/dev/null'],
    ['echo "${x@Q}"'],
    ["echo '${v@P}'"],
    ['echo "\\${v@P}"'],
    ["cat <<'E'\n${v@P} ${a[i]}\nE"],
    ['cat <<E\n${HOME} ${x:-y} ${#x}\nE'],
    ['echo "${v:1:2}" "${v: -1}" "${v:-x}"'],
    ['echo ${!prefix*} ${!arr[@]}'],
    ['for i in 1 2 3; do echo $i; done'],
  ])('finds nothing to report in %s', (script) => {
    expect(analyse(script).problems).toEqual([]);
  });

  it('remembers a name declared -i, so a later value for it is arithmetic', () => {
    expect(analyse("command declare -i n; n='a[$(id)]'").problems).toContain('a value assigned to n, an integer variable, is evaluated as arithmetic, which can run code');
    expect(analyse("declare -i n; n='a[$(id)]'").problems).toContain('a value assigned to n, an integer variable, is evaluated as arithmetic, which can run code');
  });

  it('reads `command test -v x` as test with its -v, not as `command -v`', () => {
    expect(analyse("command test -v 'a[$(id)]'").commands.map(argv)).toContainEqual(['test', '-v', 'a[$(id)]']);
    expect(analyse('command -v ls').commands.map(argv)).toEqual([['command', '-v', 'ls']]);
  });
});

describe('tilde expansion before a glob', () => {
  it('expands `~/` to $HOME and keeps the glob active after it', () => {
    const [cat] = analyse('cat ~/.ss?/id_*').commands;
    expect(cat!.args[1]!.text).toBe(`${HOME}/.ss?/id_*`);
    expect(cat!.args[1]!.glob).not.toBeNull();
  });

  it('expands `~+` to the directory the command runs in', () => {
    expect(runs('cd src && cat ~+/a*').at(-1)).toEqual({ argv: ['cat', `${ROOT}/src/a*`], cwd: `${ROOT}/src` });
  });

  it.each(['cat ~-/*', 'cat ~root/.ssh/*', 'x=~root/.ssh; cat $x/*'])('leaves %s unknown rather than guessing the directory', (script) => {
    expect(analyse(script).commands.some((command) => command.args.some((arg) => arg.unknown !== undefined))).toBe(true);
  });
});
