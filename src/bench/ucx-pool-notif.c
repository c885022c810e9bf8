/*
 * Does NIXL's UCX thread pool (num_threads > 0) lose the notification attached to a
 * transfer? Two processes on one host, as in `nixl4j kv-bench`: the consumer (parent)
 * READs DESCS descriptors of DESC_BYTES from the producer (child) with a notification
 * "done:<i>" attached, waits for the READ, then waits for the producer's answer "ack:<i>",
 * sent with genNotif when the producer sees "done:<i>". A round whose answer does not come
 * within the deadline is counted as lost and the next one starts; at the end the producer
 * reports which "done" messages it never saw.
 *
 * Built with the system compiler against the bundled libnixl_capi.so (see
 * ucx-pool-notif.sh); the few C-API functions it calls are declared here, as NIXL's
 * src/bindings/rust/wrapper.h declares them.
 *
 * usage: ucx-pool-notif ROUNDS DESCS DESC_BYTES NUM_THREADS SPLIT_BATCH_SIZE DEADLINE_MS
 *        (NUM_THREADS 0: no pool, NIXL's default engine; SPLIT_BATCH_SIZE 0: NIXL's default)
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void *handle_t;

typedef struct {
	bool enable_prog_thread;
	bool enable_listen_thread;
	int listen_port;
	int thread_sync;
	unsigned int num_workers;
	uint64_t pthr_delay_us;
	uint64_t lthr_delay_us;
	bool capture_telemetry;
} agent_config_t;

enum { SUCCESS = 0, IN_PROG = 1, MEM_DRAM = 0, OP_READ = 0, SYNC_STRICT = 1 };

int nixl_capi_create_configured_agent(const char *name, const agent_config_t *cfg, handle_t *agent);
int nixl_capi_destroy_agent(handle_t agent);
int nixl_capi_create_params(handle_t *params);
int nixl_capi_params_add(handle_t params, const char *key, const char *value);
int nixl_capi_destroy_params(handle_t params);
int nixl_capi_create_backend(handle_t agent, const char *plugin, handle_t params, handle_t *backend);
int nixl_capi_create_reg_dlist(int mem_type, handle_t *dlist);
int nixl_capi_reg_dlist_add_desc(handle_t dlist, uintptr_t addr, size_t len, uint64_t dev_id, const void *md,
		size_t md_len);
int nixl_capi_register_mem(handle_t agent, handle_t dlist, handle_t opt_args);
int nixl_capi_get_local_md(handle_t agent, void **data, size_t *len);
int nixl_capi_load_remote_md(handle_t agent, const void *data, size_t len, char **agent_name);
int nixl_capi_create_xfer_dlist(int mem_type, handle_t *dlist);
int nixl_capi_xfer_dlist_add_desc(handle_t dlist, uintptr_t addr, size_t len, uint64_t dev_id);
int nixl_capi_destroy_xfer_dlist(handle_t dlist);
int nixl_capi_create_opt_args(handle_t *args);
int nixl_capi_opt_args_set_notif_msg(handle_t args, const void *data, size_t len);
int nixl_capi_opt_args_set_has_notif(handle_t args, bool has_notif);
int nixl_capi_create_xfer_req(handle_t agent, int op, handle_t local, handle_t remote, const char *remote_agent,
		handle_t *req, handle_t opt_args);
int nixl_capi_post_xfer_req(handle_t agent, handle_t req, handle_t opt_args);
int nixl_capi_get_xfer_status(handle_t agent, handle_t req);
int nixl_capi_release_xfer_req(handle_t agent, handle_t req);
int nixl_capi_destroy_xfer_req(handle_t req);
int nixl_capi_create_notif_map(handle_t *map);
int nixl_capi_get_notifs(handle_t agent, handle_t map, handle_t opt_args);
int nixl_capi_notif_map_size(handle_t map, size_t *size);
int nixl_capi_notif_map_get_agent_at(handle_t map, size_t index, const char **agent);
int nixl_capi_notif_map_get_notifs_size(handle_t map, const char *agent, size_t *size);
int nixl_capi_notif_map_get_notif(handle_t map, const char *agent, size_t index, const void **data, size_t *len);
int nixl_capi_notif_map_clear(handle_t map);
int nixl_capi_gen_notif(handle_t agent, const char *remote, const void *data, size_t len, handle_t opt_args);

static void check(int rc, const char *what) {
	if (rc != SUCCESS) {
		fprintf(stderr, "%s failed: %d\n", what, rc);
		exit(2);
	}
}

static uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void send_blob(int fd, const void *data, size_t len) {
	uint64_t n = len;
	if (write(fd, &n, sizeof n) != sizeof n || write(fd, data, len) != (ssize_t) len) {
		perror("write");
		exit(2);
	}
}

static void *recv_blob(int fd, size_t *len) {
	uint64_t n;
	if (read(fd, &n, sizeof n) != sizeof n) {
		perror("read");
		exit(2);
	}
	char *data = malloc(n);
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, data + got, n - got);
		if (r <= 0) {
			perror("read");
			exit(2);
		}
		got += (size_t) r;
	}
	*len = n;
	return data;
}

static handle_t make_agent(const char *name, int threads, int split) {
	agent_config_t cfg = { true, false, 0, SYNC_STRICT, 1, 1000, 100000, false };
	handle_t agent, params, backend;
	check(nixl_capi_create_configured_agent(name, &cfg, &agent), "create_agent");
	check(nixl_capi_create_params(&params), "create_params");
	char value[32];
	if (threads > 0) {
		snprintf(value, sizeof value, "%d", threads);
		check(nixl_capi_params_add(params, "num_threads", value), "params_add");
	}
	if (split > 0) {
		snprintf(value, sizeof value, "%d", split);
		check(nixl_capi_params_add(params, "split_batch_size", value), "params_add");
	}
	check(nixl_capi_create_backend(agent, "UCX", params, &backend), "create_backend");
	nixl_capi_destroy_params(params);
	return agent;
}

static void register_buffer(handle_t agent, char *buffer, size_t len) {
	handle_t dlist;
	check(nixl_capi_create_reg_dlist(MEM_DRAM, &dlist), "create_reg_dlist");
	check(nixl_capi_reg_dlist_add_desc(dlist, (uintptr_t) buffer, len, 0, NULL, 0), "reg_dlist_add_desc");
	check(nixl_capi_register_mem(agent, dlist, NULL), "register_mem");
}

/* Takes every notification from PEER into CALLBACK; returns how many. */
static size_t drain(handle_t agent, handle_t map, void (*callback)(const char *, size_t, void *), void *arg) {
	check(nixl_capi_get_notifs(agent, map, NULL), "get_notifs");
	size_t agents = 0, count = 0;
	nixl_capi_notif_map_size(map, &agents);
	for (size_t a = 0; a < agents; a++) {
		const char *name;
		size_t n = 0;
		nixl_capi_notif_map_get_agent_at(map, a, &name);
		nixl_capi_notif_map_get_notifs_size(map, name, &n);
		for (size_t i = 0; i < n; i++) {
			const void *data;
			size_t len;
			nixl_capi_notif_map_get_notif(map, name, i, &data, &len);
			callback(data, len, arg);
			count++;
		}
	}
	nixl_capi_notif_map_clear(map);
	return count;
}

struct producer_state {
	handle_t agent;
	const char *consumer;
	long rounds;
	unsigned char *seen;
	bool stop;
};

static void producer_got(const char *data, size_t len, void *arg) {
	struct producer_state *s = arg;
	char text[64];
	snprintf(text, sizeof text, "%.*s", (int) (len < 63 ? len : 63), data);
	if (strcmp(text, "stop") == 0) {
		s->stop = true;
		return;
	}
	long round;
	if (sscanf(text, "done:%ld", &round) == 1 && round >= 0 && round < s->rounds) {
		s->seen[round]++;
		char ack[32];
		int n = snprintf(ack, sizeof ack, "ack:%ld", round);
		check(nixl_capi_gen_notif(s->agent, s->consumer, ack, (size_t) n, NULL), "gen_notif");
	}
}

static int producer(int fd, long rounds, size_t descs, size_t bytes, int threads, int split) {
	handle_t agent = make_agent("pool-producer", threads, split);
	size_t len = 2 * descs * bytes;
	char *buffer = aligned_alloc(4096, len);
	memset(buffer, 7, len);
	register_buffer(agent, buffer, len);
	void *md;
	size_t md_len;
	check(nixl_capi_get_local_md(agent, &md, &md_len), "get_local_md");
	send_blob(fd, md, md_len);
	uintptr_t base = (uintptr_t) buffer;
	send_blob(fd, &base, sizeof base);
	void *peer = recv_blob(fd, &md_len);
	char *consumer;
	check(nixl_capi_load_remote_md(agent, peer, md_len, &consumer), "load_remote_md");
	struct producer_state s = { agent, consumer, rounds, calloc((size_t) rounds, 1), false };
	handle_t map;
	nixl_capi_create_notif_map(&map);
	char ready = 'r';
	if (write(fd, &ready, 1) != 1) {
		return 2;
	}
	while (!s.stop) {
		if (drain(agent, map, producer_got, &s) == 0) {
			usleep(20);
		}
	}
	long missing = 0, twice = 0;
	for (long i = 0; i < rounds; i++) {
		if (s.seen[i] == 0) {
			if (missing < 20) {
				printf("producer: never saw done:%ld\n", i);
			}
			missing++;
		}
		else if (s.seen[i] > 1) {
			twice++;
		}
	}
	printf("producer: done messages missing %ld of %ld, seen more than once %ld\n", missing, rounds, twice);
	fflush(stdout);
	nixl_capi_destroy_agent(agent);
	return missing == 0 ? 0 : 1;
}

struct consumer_state {
	long waiting;
	bool answered;
	long late;
};

static void consumer_got(const char *data, size_t len, void *arg) {
	struct consumer_state *s = arg;
	char text[64];
	snprintf(text, sizeof text, "%.*s", (int) (len < 63 ? len : 63), data);
	long round;
	if (sscanf(text, "ack:%ld", &round) == 1) {
		if (round == s->waiting) {
			s->answered = true;
		}
		else {
			s->late++;
		}
	}
}

static int consumer(int fd, long rounds, size_t descs, size_t bytes, int threads, int split, long deadline_ms) {
	handle_t agent = make_agent("pool-consumer", threads, split);
	size_t len = descs * bytes;
	char *buffer = aligned_alloc(4096, len);
	memset(buffer, 0, len);
	register_buffer(agent, buffer, len);
	size_t md_len;
	void *peer = recv_blob(fd, &md_len);
	size_t base_len;
	uintptr_t *remote_base = recv_blob(fd, &base_len);
	char *producer_name;
	check(nixl_capi_load_remote_md(agent, peer, md_len, &producer_name), "load_remote_md");
	void *md;
	check(nixl_capi_get_local_md(agent, &md, &md_len), "get_local_md");
	send_blob(fd, md, md_len);
	char ready;
	if (read(fd, &ready, 1) != 1) {
		return 2;
	}
	handle_t map, opt;
	nixl_capi_create_notif_map(&map);
	nixl_capi_create_opt_args(&opt);
	struct consumer_state s = { -1, false, 0 };
	long lost = 0, failed = 0;
	uint64_t started = now_ns();
	unsigned seed = 1;
	for (long round = 0; round < rounds; round++) {
		handle_t local, remote, req;
		check(nixl_capi_create_xfer_dlist(MEM_DRAM, &local), "create_xfer_dlist");
		check(nixl_capi_create_xfer_dlist(MEM_DRAM, &remote), "create_xfer_dlist");
		for (size_t d = 0; d < descs; d++) {
			/* scattered: each descriptor from a random slot of the producer's 2 x DESCS */
			size_t slot = (size_t) rand_r(&seed) % (2 * descs);
			check(nixl_capi_xfer_dlist_add_desc(local, (uintptr_t) buffer + d * bytes, bytes, 0), "add_desc");
			check(nixl_capi_xfer_dlist_add_desc(remote, *remote_base + slot * bytes, bytes, 0), "add_desc");
		}
		char done[32];
		int n = snprintf(done, sizeof done, "done:%ld", round);
		check(nixl_capi_opt_args_set_notif_msg(opt, done, (size_t) n), "set_notif_msg");
		check(nixl_capi_opt_args_set_has_notif(opt, true), "set_has_notif");
		check(nixl_capi_create_xfer_req(agent, OP_READ, local, remote, producer_name, &req, NULL),
				"create_xfer_req");
		int rc = nixl_capi_post_xfer_req(agent, req, opt);
		while (rc == IN_PROG) {
			rc = nixl_capi_get_xfer_status(agent, req);
		}
		if (rc != SUCCESS) {
			printf("consumer: round %ld: READ failed: %d\n", round, rc);
			failed++;
		}
		s.waiting = round;
		s.answered = false;
		uint64_t deadline = now_ns() + (uint64_t) deadline_ms * 1000000u;
		while (!s.answered && now_ns() < deadline) {
			if (drain(agent, map, consumer_got, &s) == 0) {
				usleep(20);
			}
		}
		if (!s.answered) {
			if (lost < 20) {
				printf("consumer: round %ld: no ack within %ld ms\n", round, deadline_ms);
			}
			lost++;
		}
		nixl_capi_release_xfer_req(agent, req);
		nixl_capi_destroy_xfer_req(req);
		nixl_capi_destroy_xfer_dlist(local);
		nixl_capi_destroy_xfer_dlist(remote);
	}
	double seconds = (double) (now_ns() - started) / 1e9;
	printf("consumer: %ld rounds of %zu x %zu B, num_threads=%d split_batch_size=%d: %.1f s, %.2f GB/s, "
			"READ failures %ld, answers lost %ld, late %ld\n",
			rounds, descs, bytes, threads, split, seconds, (double) rounds * (double) len / seconds / 1e9, failed,
			lost, s.late);
	fflush(stdout);
	check(nixl_capi_gen_notif(agent, producer_name, "stop", 4, NULL), "gen_notif");
	/* keep progressing until the producer has taken "stop" and exits */
	int status;
	while (waitpid(-1, &status, WNOHANG) == 0) {
		drain(agent, map, consumer_got, &s);
		usleep(100);
	}
	nixl_capi_destroy_agent(agent);
	int child = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
	return (lost == 0 && failed == 0 && child == 0) ? 0 : 1;
}

int main(int argc, char **argv) {
	if (argc != 7) {
		fprintf(stderr, "usage: %s ROUNDS DESCS DESC_BYTES NUM_THREADS SPLIT_BATCH_SIZE DEADLINE_MS\n", argv[0]);
		return 2;
	}
	long rounds = atol(argv[1]);
	size_t descs = (size_t) atol(argv[2]), bytes = (size_t) atol(argv[3]);
	int threads = atoi(argv[4]), split = atoi(argv[5]);
	long deadline_ms = atol(argv[6]);
	if (rounds < 1 || rounds > 10000000 || descs < 1 || descs > 65536 || bytes < 1 || bytes > (64u << 20)
			|| threads < 0 || threads > 64 || split < 0 || deadline_ms < 1) {
		fprintf(stderr, "argument out of range\n");
		return 2;
	}
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
		perror("socketpair");
		return 2;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		close(fds[0]);
		return producer(fds[1], rounds, descs, bytes, threads, split);
	}
	close(fds[1]);
	return consumer(fds[0], rounds, descs, bytes, threads, split, deadline_ms);
}
