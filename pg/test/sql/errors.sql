-- errors.sql: settings that only a restart changes, and the one any session may.
SET idgen.layout = 'twitter';
SET idgen.lease = 'etcd';
SET idgen.worker_id = 3;
SET idgen.opaque_key_file = '/tmp/other.key';
SET idgen.start_wait = '2s';
SHOW idgen.start_wait;
SET idgen.start_wait = -1;
SET idgen.nonesuch = 1;
SHOW idgen.layout;
SHOW idgen.lease;
SHOW idgen.policy;
