# bash completion for holt(1)
_holt_sessions()
{
	holt ls --json 2>/dev/null | tr ',' '\n' | sed -n 's/.*"name":"\([^"]*\)".*/\1/p'
}

_holt_sandboxes()
{
	holt sandbox ls --json 2>/dev/null | tr ',' '\n' | sed -n 's/.*"\(id\|name\)":"\([^"]*\)".*/\2/p'
}

_holt()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-L|-S) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "new attach ls send approve interrupt log
		    kill-session run diff commit pr sandbox policy config server
		    kill-server demo version help" -- "$cur"))
		return
	fi
	case $prev in
	-t|--resume) COMPREPLY=($(compgen -W "$(_holt_sessions)" -- "$cur")); return ;;
	--mode) COMPREPLY=($(compgen -W "manual auto strict trust" -- "$cur")); return ;;
	--net) COMPREPLY=($(compgen -W "off on" -- "$cur")); return ;;
	--ask) COMPREPLY=($(compgen -W "deny stdin" -- "$cur")); return ;;
	--repo|--body-file|--policy) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	case $cmd in
	new) COMPREPLY=($(compgen -W "-d -s --repo --branch --depth --model --base-url --mode --net --steps --test-command --help" -- "$cur")) ;;
	attach) COMPREPLY=($(compgen -W "-r -t --lines --theme --help" -- "$cur")) ;;
	run) COMPREPLY=($(compgen -W "-s --repo --model --base-url --mode --ask --steps --test-command --net --headless --resume --help" -- "$cur")) ;;
	approve) COMPREPLY=($(compgen -W "-t --id --rule --message --command allow deny always" -- "$cur")) ;;
	log) COMPREPLY=($(compgen -W "-t -f --json" -- "$cur")) ;;
	kill-session) COMPREPLY=($(compgen -W "-t --rm" -- "$cur")) ;;
	diff) COMPREPLY=($(compgen -W "-t --stat --json" -- "$cur")) ;;
	pr) COMPREPLY=($(compgen -W "-t --title --body --body-file --branch --base --draft --local" -- "$cur")) ;;
	sandbox)
		if [[ $prev == sandbox ]]; then
			COMPREPLY=($(compgen -W "create ls exec sh put get pause resume stop start rm service forward" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_holt_sandboxes)" -- "$cur"))
		fi ;;
	policy) COMPREPLY=($(compgen -W "check show --mode --policy --json" -- "$cur")) ;;
	config) COMPREPLY=($(compgen -W "show --repo" -- "$cur")) ;;
	help) COMPREPLY=($(compgen -W "new attach ls send approve interrupt log kill-session run diff commit pr sandbox policy config server kill-server demo version" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "-t --help" -- "$cur")) ;;
	esac
}
complete -F _holt holt
