# zsh -f zsh-complete.zsh <script> <line>...
# Completes each line in a real interactive zsh (compinit, the script sourced as a user's
# .zshrc would) by typing it and a Tab into a pseudo-terminal, and prints what completion
# offered: one word a line, then <end> after each line's words. compadd is wrapped to print
# the words it is given after zsh's own matching, so the words are the ones a user sees.
zmodload zsh/zpty || exit 2
zpty corral zsh -f -i
zpty -w corral 'PROMPT= RPROMPT= ; unsetopt zle_bracketed_paste 2>/dev/null'
zpty -w corral 'autoload -U compinit && compinit -u -D'
zpty -w corral "source ${(q)1}"
zpty -w corral 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi; local -a __hits __prefix; zparseopts -E -a __ignored p:=__prefix; builtin compadd -A __hits "$@"; local w; for w in $__hits; do print -r -- "<hit>${__prefix[2]}$w"; done; builtin compadd "$@" }'
# No list under the line: a long one asks "do you wish to see all…?" and eats the next key.
zpty -w corral 'unsetopt auto_list list_beep beep; LISTMAX=100000; zstyle ":completion:*" list-prompt ""; zstyle ":completion:*" select-prompt ""'
# Ctrl-X completes, then marks the end of what completion printed. Typing the next key
# only after that matters: zsh cuts completion short when it sees keys waiting.
zpty -w corral '_corral_probe() { zle complete-word; print -r -- "<do""ne>" }; zle -N _corral_probe; bindkey "^X" _corral_probe'
# The markers are split in what is typed so that the echo of the typing never matches them.
zpty -w corral 'print "<rea""dy>"'
local line
while zpty -r corral line; do [[ $line == *'<ready>'* ]] && break; done
shift
for query in "$@"; do
  zpty -w -n corral "$query"$'\C-x'
  while zpty -r corral line; do
    [[ $line == *'<hit>'* ]] && print -r -- "${${line##*<hit>}%%$'\r'*}"
    [[ $line == *'<done>'* ]] && break
  done
  print -r -- '<end>'
  zpty -w -n corral $'\C-u'
done
zpty -d corral
