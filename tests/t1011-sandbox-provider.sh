#!/bin/sh
# Providers (DESIGN 17): the local one by default, recorded in meta.json
# and shown by ls; a provider that is not one of holt's is a clear error
# at create and at open, never a local sandbox instead.
. "$(dirname "$0")/lib.sh"

test_sandbox_script

test_expect_success 'create records provider local in meta.json' '
	holt sandbox create --name p1 --net off >id &&
	grep "\"provider\":[[:space:]]*\"local\"" \
		"$HOLT_HOME/data/sandboxes/$(cat id)/meta.json" &&
	holt sandbox create --name p2 --net off --provider local >id2 &&
	grep "\"provider\":[[:space:]]*\"local\"" \
		"$HOLT_HOME/data/sandboxes/$(cat id2)/meta.json"
'

test_expect_success 'ls shows the provider; --provider filters' '
	holt sandbox ls >ls &&
	head -n 1 ls | grep " PROVIDER " &&
	grep "^$(cat id)  *p1  *running .* local " ls &&
	holt sandbox ls --json >json &&
	grep "\"provider\":[[:space:]]*\"local\"" json &&
	holt sandbox ls --provider local >ls2 &&
	grep "^$(cat id) " ls2 &&
	holt sandbox ls --provider ssh:nowhere.invalid >ls3 &&
	test_line_count = 1 ls3
'

test_expect_success 'an unknown provider is a usage error naming it' '
	test_expect_code 2 holt sandbox create --provider cloud9 2>err &&
	grep "provider .cloud9.: not one of local" err &&
	test_expect_code 2 holt sandbox create --provider local:x 2>err &&
	grep "takes no argument" err &&
	test_expect_code 2 holt sandbox create --provider ssh: 2>err &&
	grep "say which host" err &&
	test_expect_code 2 holt sandbox create --provider ssh:-oProxyCommand=x \
		2>err &&
	grep "not a \[USER@\]HOST" err &&
	test_expect_code 2 holt sandbox create --provider "ssh:a b" 2>err &&
	ls "$HOLT_HOME/data/sandboxes" >dirs &&
	test_line_count = 2 dirs
'

test_expect_success 'holt.conf provider applies; a bad one is refused' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "provider = nope" >"$HOLT_HOME/config/holt.conf" &&
	test_expect_code 6 holt sandbox create --net off 2>err &&
	grep "provider .nope." err &&
	echo "provider = local" >"$HOLT_HOME/config/holt.conf" &&
	holt sandbox create --net off >id3 &&
	grep "\"provider\":[[:space:]]*\"local\"" \
		"$HOLT_HOME/data/sandboxes/$(cat id3)/meta.json" &&
	holt sandbox rm "$(cat id3)" &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success 'a fork of a local one stays local, whatever holt.conf says' '
	echo "provider = ssh:elsewhere.invalid" >"$HOLT_HOME/config/holt.conf" &&
	holt sandbox fork p1 --name p1f >fid &&
	rm "$HOLT_HOME/config/holt.conf" &&
	grep "\"provider\":[[:space:]]*\"local\"" \
		"$HOLT_HOME/data/sandboxes/$(cat fid)/meta.json" &&
	holt sandbox rm p1f
'

test_expect_success 'meta.json without a provider is local (made before them)' '
	m="$HOLT_HOME/data/sandboxes/$(cat id2)/meta.json" &&
	grep -v "\"provider\"" "$m" >m.new && cp m.new "$m" &&
	holt sandbox exec p2 -- echo still here >out &&
	test "$(cat out)" = "still here" &&
	holt sandbox ls --provider local | grep "^$(cat id2) "
'

test_expect_success 'a provider this holt lacks: an error, never a local one' '
	m="$HOLT_HOME/data/sandboxes/$(cat id2)/meta.json" &&
	sed "s/\"id\":/\"provider\": \"mars:x\", \"id\":/" "$m" >m.new &&
	cp m.new "$m" &&
	test_must_fail holt sandbox exec p2 -- true 2>err &&
	grep "provider .mars:x. is not one this holt has" err
'

test_done
