/*
 * The C floor of nixl4j's per-transfer cost: what `nixl4j bench --processes 1` measures,
 * driven from C through the same libnixl_capi.so, with the same agent configuration as
 * nixl4j's defaults (AgentConfig / NativeDriver): UCX backend with nixl4j's default
 * parameters (UCX's thread pool: num_threads = the processors, at most 4, where there are
 * at least 2, and split_batch_size=32, as UcxDefaults adds them; --backend-param
 * KEY=VALUE sets or overrides one, num_threads=0 turns the pool off), STRICT thread sync, NIXL's progress thread on with a 1 ms delay, no
 * listener thread, no telemetry, one UCX worker. Two agents in one process, DRAM to DRAM.
 *
 * As the bench does: memory is registered once, the target's metadata loaded into the
 * initiator, descriptor lists prepared once per block size, a transfer made from them
 * with index selection (timed as "prep"), then posted again and again. Each post is
 * timed as "post" (the call itself) and "tx" (from its return to done, busy-polling
 * nixl_capi_get_xfer_status); "post-to-done" is the sum. The destination is checked
 * against the source after the timed posts.
 *
 * No NIXL header is needed: the few functions used are declared below, as in NIXL's
 * src/bindings/rust/wrapper.h (NIXL 1.5.1), and as nixl4j's Capi.java binds them.
 *
 *   nixl_floor [--op read|write|both] [--min-block SIZE] [--max-block SIZE] [--batch N]
 *              [--iterations N] [--warmup N] [--large-block-factor N]
 *              [--backend-param KEY=VALUE]... [--json]
 *
 * Build: src/bench/compare-c-floor.sh builds it (cc against the bundled library).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- NIXL C API (libnixl_capi.so) ---- */

typedef int nixl_capi_status_t;
typedef void *nixl_capi_agent_t;
typedef void *nixl_capi_params_t;
typedef void *nixl_capi_backend_t;
typedef void *nixl_capi_opt_args_t;
typedef void *nixl_capi_reg_dlist_t;
typedef void *nixl_capi_xfer_dlist_t;
typedef void *nixl_capi_xfer_dlist_handle_t;
typedef void *nixl_capi_xfer_req_t;

enum { NIXL_CAPI_SUCCESS = 0, NIXL_CAPI_IN_PROG = 1 };
enum { NIXL_CAPI_MEM_DRAM = 0 };
enum { NIXL_CAPI_XFER_OP_READ = 0, NIXL_CAPI_XFER_OP_WRITE = 1 };
enum { NIXL_CAPI_THREAD_SYNC_STRICT = 1 };

typedef struct {
	bool enable_prog_thread;
	bool enable_listen_thread;
	int listen_port;
	int thread_sync;
	unsigned int num_workers;
	uint64_t pthr_delay_us;
	uint64_t lthr_delay_us;
	bool capture_telemetry;
} nixl_capi_agent_config_t;

nixl_capi_status_t nixl_capi_create_configured_agent(const char *name, const nixl_capi_agent_config_t *cfg,
		nixl_capi_agent_t *agent);
nixl_capi_status_t nixl_capi_destroy_agent(nixl_capi_agent_t agent);
nixl_capi_status_t nixl_capi_create_params(nixl_capi_params_t *params);
nixl_capi_status_t nixl_capi_destroy_params(nixl_capi_params_t params);
nixl_capi_status_t nixl_capi_params_add(nixl_capi_params_t params, const char *key, const char *value);
nixl_capi_status_t nixl_capi_create_backend(nixl_capi_agent_t agent, const char *plugin, nixl_capi_params_t params,
		nixl_capi_backend_t *backend);
nixl_capi_status_t nixl_capi_destroy_backend(nixl_capi_backend_t backend);
nixl_capi_status_t nixl_capi_create_reg_dlist(int mem_type, nixl_capi_reg_dlist_t *dlist);
nixl_capi_status_t nixl_capi_reg_dlist_add_desc(nixl_capi_reg_dlist_t dlist, uintptr_t addr, size_t len,
		uint64_t dev_id, const void *metadata, size_t metadata_len);
nixl_capi_status_t nixl_capi_destroy_reg_dlist(nixl_capi_reg_dlist_t dlist);
nixl_capi_status_t nixl_capi_register_mem(nixl_capi_agent_t agent, nixl_capi_reg_dlist_t dlist,
		nixl_capi_opt_args_t opt);
nixl_capi_status_t nixl_capi_deregister_mem(nixl_capi_agent_t agent, nixl_capi_reg_dlist_t dlist,
		nixl_capi_opt_args_t opt);
nixl_capi_status_t nixl_capi_get_local_md(nixl_capi_agent_t agent, void **data, size_t *len);
nixl_capi_status_t nixl_capi_load_remote_md(nixl_capi_agent_t agent, const void *data, size_t len, char **name);
nixl_capi_status_t nixl_capi_create_xfer_dlist(int mem_type, nixl_capi_xfer_dlist_t *dlist);
nixl_capi_status_t nixl_capi_xfer_dlist_add_desc(nixl_capi_xfer_dlist_t dlist, uintptr_t addr, size_t len,
		uint64_t dev_id);
nixl_capi_status_t nixl_capi_destroy_xfer_dlist(nixl_capi_xfer_dlist_t dlist);
nixl_capi_status_t nixl_capi_prep_xfer_dlist(nixl_capi_agent_t agent, const char *agent_name,
		nixl_capi_xfer_dlist_t descs, nixl_capi_xfer_dlist_handle_t *handle, nixl_capi_opt_args_t opt);
nixl_capi_status_t nixl_capi_release_xfer_dlist_handle(nixl_capi_agent_t agent,
		nixl_capi_xfer_dlist_handle_t handle);
nixl_capi_status_t nixl_capi_make_xfer_req(nixl_capi_agent_t agent, int op, nixl_capi_xfer_dlist_handle_t local,
		const int *local_indices, size_t local_count, nixl_capi_xfer_dlist_handle_t remote,
		const int *remote_indices, size_t remote_count, nixl_capi_xfer_req_t *req, nixl_capi_opt_args_t opt);
nixl_capi_status_t nixl_capi_post_xfer_req(nixl_capi_agent_t agent, nixl_capi_xfer_req_t req,
		nixl_capi_opt_args_t opt);
nixl_capi_status_t nixl_capi_get_xfer_status(nixl_capi_agent_t agent, nixl_capi_xfer_req_t req);
nixl_capi_status_t nixl_capi_release_xfer_req(nixl_capi_agent_t agent, nixl_capi_xfer_req_t req);
nixl_capi_status_t nixl_capi_destroy_xfer_req(nixl_capi_xfer_req_t req);

/* ---- options ---- */

#define LARGE_BLOCK (1L << 20)
#define PREP_SAMPLES 100
#define PROGRESS_DELAY_US 1000

static struct {
	bool read;
	bool write;
	long min_block;
	long max_block;
	int batch;
	int iterations;
	int warmup;
	int large_block_factor;
	bool json;
} options = { true, true, 4096, 64L << 20, 1, 1000, 100, 16, false };

/* the UCX backend's parameters: nixl4j's defaults, then --backend-param */
#define MAX_PARAMS 16
static char param_keys[MAX_PARAMS][64];
static char param_values[MAX_PARAMS][64];
static int param_count;

static void set_param(const char *key, const char *value, bool override) {
	for (int i = 0; i < param_count; i++) {
		if (strcmp(param_keys[i], key) == 0) {
			if (override) {
				snprintf(param_values[i], sizeof(param_values[i]), "%s", value);
			}
			return;
		}
	}
	if (param_count == MAX_PARAMS) {
		fprintf(stderr, "nixl_floor: at most %d backend parameters\n", MAX_PARAMS);
		exit(2);
	}
	snprintf(param_keys[param_count], sizeof(param_keys[0]), "%s", key);
	snprintf(param_values[param_count], sizeof(param_values[0]), "%s", value);
	param_count++;
}

/* UcxDefaults: the thread pool unless the parameters set it (num_threads=0 turns it off) */
static void default_params(void) {
	long processors = sysconf(_SC_NPROCESSORS_ONLN);
	bool given = false;
	bool pool = false;
	for (int i = 0; i < param_count; i++) {
		if (strcmp(param_keys[i], "num_threads") == 0) {
			given = true;
			pool = strcmp(param_values[i], "0") != 0;
		}
	}
	if (!given && processors >= 2) {
		char value[16];
		snprintf(value, sizeof(value), "%ld", processors < 4 ? processors : 4);
		set_param("num_threads", value, false);
		pool = true;
	}
	if (pool) {
		set_param("split_batch_size", "32", false);
	}
}

/* the parameters as the bench prints them: {k=v, ...} or, for JSON, {"k":"v",...} */
static void print_params(FILE *out, bool json) {
	fputc('{', out);
	for (int i = 0; i < param_count; i++) {
		if (json) {
			fprintf(out, "%s\"%s\":\"%s\"", i ? "," : "", param_keys[i], param_values[i]);
		}
		else {
			fprintf(out, "%s%s=%s", i ? ", " : "", param_keys[i], param_values[i]);
		}
	}
	fputc('}', out);
}

static void usage(FILE *out) {
	fprintf(out, "usage: nixl_floor [--op read|write|both] [--min-block SIZE] [--max-block SIZE] [--batch N]\n"
			"                  [--iterations N] [--warmup N] [--large-block-factor N]\n"
			"                  [--backend-param KEY=VALUE]... [--json]\n"
			"SIZE takes k, m or g (KiB, MiB, GiB); defaults as nixl4j bench: both, 4k, 64m, 1, 1000, 100, 16\n");
}

static void fail(const char *message, const char *detail) {
	fprintf(stderr, "nixl_floor: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
	exit(2);
}

static void check(nixl_capi_status_t rc, const char *operation) {
	if (rc != NIXL_CAPI_SUCCESS) {
		fprintf(stderr, "nixl_floor: %s failed with status %d\n", operation, rc);
		exit(1);
	}
}

static long parse_size(const char *option, const char *text) {
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	int shift = 0;
	if (*end == 'k' || *end == 'K') {
		shift = 10;
	}
	else if (*end == 'm' || *end == 'M') {
		shift = 20;
	}
	else if (*end == 'g' || *end == 'G') {
		shift = 30;
	}
	if (shift != 0) {
		end++;
		if (strcasecmp(end, "ib") == 0) {
			end += 2;
		}
	}
	if (errno != 0 || end == text || *end != '\0' || value <= 0 || value > (1L << (40 - shift))) {
		fail(option, "expected a positive size such as 4096, 4k or 64m, at most 1 TiB");
	}
	return value << shift;
}

static int parse_count(const char *option, const char *text, int min) {
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < min || value > 100000000L) {
		fail(option, min > 0 ? "expected a whole number from 1 to 100000000"
				: "expected a whole number from 0 to 100000000");
	}
	return (int) value;
}

static void parse(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		const char *option = argv[i];
		if (strcmp(option, "--json") == 0) {
			options.json = true;
			continue;
		}
		if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (i + 1 >= argc) {
			usage(stderr);
			fail(option, "unknown option or missing value");
		}
		const char *value = argv[++i];
		if (strcmp(option, "--op") == 0) {
			options.read = strcasecmp(value, "read") == 0 || strcasecmp(value, "both") == 0;
			options.write = strcasecmp(value, "write") == 0 || strcasecmp(value, "both") == 0;
			if (!options.read && !options.write) {
				fail(option, "expected read, write or both");
			}
		}
		else if (strcmp(option, "--min-block") == 0) {
			options.min_block = parse_size(option, value);
		}
		else if (strcmp(option, "--max-block") == 0) {
			options.max_block = parse_size(option, value);
		}
		else if (strcmp(option, "--batch") == 0) {
			options.batch = parse_count(option, value, 1);
		}
		else if (strcmp(option, "--iterations") == 0) {
			options.iterations = parse_count(option, value, 1);
		}
		else if (strcmp(option, "--warmup") == 0) {
			options.warmup = parse_count(option, value, 0);
		}
		else if (strcmp(option, "--large-block-factor") == 0) {
			options.large_block_factor = parse_count(option, value, 1);
		}
		else if (strcmp(option, "--backend-param") == 0) {
			const char *equals = strchr(value, '=');
			if (equals == NULL || equals == value || (size_t) (equals - value) >= sizeof(param_keys[0])
					|| strlen(equals + 1) >= sizeof(param_values[0])) {
				fail(option, "expected KEY=VALUE, each at most 63 characters");
			}
			char key[64];
			snprintf(key, sizeof(key), "%.*s", (int) (equals - value), value);
			set_param(key, equals + 1, true);
		}
		else {
			usage(stderr);
			fail(option, "unknown option");
		}
	}
	if (options.max_block < options.min_block) {
		fail("--max-block", "must be at least --min-block");
	}
	if (options.max_block > (16L << 30) / options.batch) {
		fail("--max-block", "max-block x batch must be at most 16 GiB");
	}
}

static int iterations(long block) {
	int n = options.iterations / options.large_block_factor;
	return block > LARGE_BLOCK ? (n < 1 ? 1 : n) : options.iterations;
}

static int warmup(long block) {
	return block > LARGE_BLOCK ? options.warmup / options.large_block_factor : options.warmup;
}

/* ---- samples ---- */

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t) t.tv_sec * 1000000000L + t.tv_nsec;
}

static int compare(const void *a, const void *b) {
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
	return (x > y) - (x < y);
}

static double mean_us(const int64_t *nanos, int count) {
	double sum = 0;
	for (int i = 0; i < count; i++) {
		sum += (double) nanos[i];
	}
	return count == 0 ? 0 : sum / count / 1000.0;
}

/* The same percentile as nixl4j's Samples: the value at index count x fraction. */
static double percentile_us(int64_t *nanos, int count, double fraction) {
	if (count == 0) {
		return 0;
	}
	qsort(nanos, (size_t) count, sizeof(int64_t), compare);
	int index = (int) (count * fraction);
	return (double) nanos[index < count ? index : count - 1] / 1000.0;
}

/* ---- the benchmark ---- */

typedef struct {
	const char *op;
	long block;
	int iterations;
	int warmup;
	double bandwidth_gbps, avg_latency_us, avg_prep_us, p99_prep_us, avg_post_us, p99_post_us, avg_tx_us, p99_tx_us,
			median_post_to_done_us;
	bool verified;
} row_t;

static nixl_capi_agent_t initiator, target;
static char *target_name;
static unsigned char *local_buffer, *remote_buffer;

static nixl_capi_backend_t backends[2];

static nixl_capi_agent_t create_agent(const char *name, nixl_capi_backend_t *backend) {
	nixl_capi_agent_config_t config = { .enable_prog_thread = true,
		.enable_listen_thread = false,
		.listen_port = 8888,
		.thread_sync = NIXL_CAPI_THREAD_SYNC_STRICT,
		.num_workers = 1,
		.pthr_delay_us = PROGRESS_DELAY_US,
		.lthr_delay_us = 100000,
		.capture_telemetry = false };
	nixl_capi_agent_t agent;
	check(nixl_capi_create_configured_agent(name, &config, &agent), "create_configured_agent");
	nixl_capi_params_t params;
	check(nixl_capi_create_params(&params), "create_params");
	for (int i = 0; i < param_count; i++) {
		check(nixl_capi_params_add(params, param_keys[i], param_values[i]), "params_add");
	}
	check(nixl_capi_create_backend(agent, "UCX", params, backend), "create_backend UCX");
	nixl_capi_destroy_params(params);
	return agent;
}

static nixl_capi_reg_dlist_t register_buffer(nixl_capi_agent_t agent, void *buffer, size_t size) {
	nixl_capi_reg_dlist_t dlist;
	check(nixl_capi_create_reg_dlist(NIXL_CAPI_MEM_DRAM, &dlist), "create_reg_dlist");
	check(nixl_capi_reg_dlist_add_desc(dlist, (uintptr_t) buffer, size, 0, NULL, 0), "reg_dlist_add_desc");
	check(nixl_capi_register_mem(agent, dlist, NULL), "register_mem");
	return dlist;
}

static nixl_capi_xfer_dlist_handle_t prepare(const char *agent_name, unsigned char *base, long block) {
	nixl_capi_xfer_dlist_t dlist;
	check(nixl_capi_create_xfer_dlist(NIXL_CAPI_MEM_DRAM, &dlist), "create_xfer_dlist");
	for (int i = 0; i < options.batch; i++) {
		check(nixl_capi_xfer_dlist_add_desc(dlist, (uintptr_t) (base + (size_t) i * block), (size_t) block, 0),
				"xfer_dlist_add_desc");
	}
	nixl_capi_xfer_dlist_handle_t handle;
	check(nixl_capi_prep_xfer_dlist(initiator, agent_name, dlist, &handle, NULL), "prep_xfer_dlist");
	nixl_capi_destroy_xfer_dlist(dlist);
	return handle;
}

static void fill(unsigned char *buffer, size_t length, uint64_t seed) {
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (size_t i = 0; i < length; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buffer[i] = (unsigned char) x;
	}
}

/* Posts once and busy-polls the status until done; returns the post's own duration. */
static int64_t post_and_wait(nixl_capi_xfer_req_t request, int64_t *done) {
	int64_t start = now_ns();
	nixl_capi_status_t rc = nixl_capi_post_xfer_req(initiator, request, NULL);
	int64_t posted = now_ns();
	while (rc == NIXL_CAPI_IN_PROG) {
		rc = nixl_capi_get_xfer_status(initiator, request);
	}
	*done = now_ns();
	check(rc, "post_xfer_req / get_xfer_status");
	return posted - start;
}

static void release(nixl_capi_xfer_req_t request) {
	check(nixl_capi_release_xfer_req(initiator, request), "release_xfer_req");
	nixl_capi_destroy_xfer_req(request);
}

static row_t measure(int op, long block) {
	int batch = options.batch;
	size_t bytes = (size_t) block * batch;
	fill(op == NIXL_CAPI_XFER_OP_WRITE ? local_buffer : remote_buffer, bytes, (uint64_t) block * 4 + op + 1);
	nixl_capi_xfer_dlist_handle_t local = prepare("", local_buffer, block);
	nixl_capi_xfer_dlist_handle_t remote = prepare(target_name, remote_buffer, block);
	int *indices = malloc(sizeof(int) * (size_t) batch);
	for (int i = 0; i < batch; i++) {
		indices[i] = i;
	}
	int n = iterations(block);
	int prep_count = n < PREP_SAMPLES ? n : PREP_SAMPLES;
	int64_t *prep = malloc(sizeof(int64_t) * (size_t) prep_count);
	nixl_capi_xfer_req_t request = NULL;
	for (int i = 0; i < prep_count; i++) {
		if (request != NULL) {
			release(request);
		}
		int64_t start = now_ns();
		check(nixl_capi_make_xfer_req(initiator, op, local, indices, (size_t) batch, remote, indices, (size_t) batch,
				&request, NULL), "make_xfer_req");
		prep[i] = now_ns() - start;
	}
	int64_t done;
	for (int i = 0; i < warmup(block); i++) {
		post_and_wait(request, &done);
	}
	int64_t *post = malloc(sizeof(int64_t) * (size_t) n);
	int64_t *tx = malloc(sizeof(int64_t) * (size_t) n);
	int64_t *total = malloc(sizeof(int64_t) * (size_t) n);
	int64_t begin = now_ns();
	for (int i = 0; i < n; i++) {
		int64_t start = now_ns();
		post[i] = post_and_wait(request, &done);
		tx[i] = done - start - post[i];
		total[i] = done - start;
	}
	int64_t wall = now_ns() - begin;
	row_t row = { .op = op == NIXL_CAPI_XFER_OP_WRITE ? "WRITE" : "READ",
		.block = block,
		.iterations = n,
		.warmup = warmup(block),
		.bandwidth_gbps = (double) bytes * n / (double) wall,
		.avg_latency_us = (double) wall / 1000.0 / ((double) n * batch),
		.avg_prep_us = mean_us(prep, prep_count),
		.p99_prep_us = percentile_us(prep, prep_count, 0.99),
		.avg_post_us = mean_us(post, n),
		.p99_post_us = percentile_us(post, n, 0.99),
		.avg_tx_us = mean_us(tx, n),
		.p99_tx_us = percentile_us(tx, n, 0.99),
		.median_post_to_done_us = percentile_us(total, n, 0.5),
		.verified = memcmp(local_buffer, remote_buffer, bytes) == 0 };
	release(request);
	check(nixl_capi_release_xfer_dlist_handle(initiator, local), "release_xfer_dlist_handle");
	check(nixl_capi_release_xfer_dlist_handle(initiator, remote), "release_xfer_dlist_handle");
	free(indices);
	free(prep);
	free(post);
	free(tx);
	free(total);
	return row;
}

/* ---- output, as nixl4j bench's BenchReport ---- */

static char library[4096];

static void describe_library(void) {
	Dl_info info;
	char version[64] = "unknown";
	const char *path = "unknown";
	if (dladdr((void *) nixl_capi_post_xfer_req, &info) != 0 && info.dli_fname != NULL) {
		path = info.dli_fname;
		char file[4096];
		const char *slash = strrchr(path, '/');
		int directory = (slash != NULL) ? (int) (slash - path) : 0;
		snprintf(file, sizeof(file), "%.*s/NIXL_VERSION", directory, path);
		FILE *in = fopen(file, "r");
		if (in != NULL) {
			if (fgets(version, sizeof(version), in) == NULL) {
				strcpy(version, "unknown");
			}
			version[strcspn(version, "\r\n")] = '\0';
			fclose(in);
		}
	}
	snprintf(library, sizeof(library), "NIXL %s (%s, linked by nixl_floor)", version, path);
}

static const char *columns[] = { "Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)",
	"P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)", "Med Post-to-Done (us)" };

static const int widths[] = { 20, 15, 15, 15, 15, 15, 15, 15, 15, 15, 22 };

static void print_cells(char cells[][32]) {
	char line[512];
	size_t at = 0;
	for (int i = 0; i < 11; i++) {
		at += (size_t) snprintf(line + at, sizeof(line) - at, "%-*s ", widths[i] - 1, cells[i]);
	}
	while (at > 0 && line[at - 1] == ' ') {
		line[--at] = '\0';
	}
	fputs(line, stdout);
}

static void print_header(const char *op) {
	printf("\n%s, DRAM -> DRAM, 1 process(es), %s\n", op, library);
	printf("backends [BackendConfig[plugin=UCX, parameters=");
	print_params(stdout, false);
	printf("]], progress delay %d us, native environment {}\n", PROGRESS_DELAY_US);
	printf("%d iterations (%d above 1 MiB), %d warm-up (%d above 1 MiB), completion busy-poll\n", options.iterations,
			iterations(LARGE_BLOCK + 1), options.warmup, warmup(LARGE_BLOCK + 1));
	char cells[11][32];
	for (int i = 0; i < 11; i++) {
		snprintf(cells[i], sizeof(cells[i]), "%s", columns[i]);
	}
	print_cells(cells);
	int length = 0;
	for (int i = 0; i < 10; i++) {
		length += widths[i];
	}
	length += (int) strlen(columns[10]);
	printf("\n");
	for (int i = 0; i < length; i++) {
		putchar('-');
	}
	printf("\n");
}

static void print_row(const row_t *row) {
	char cells[11][32];
	snprintf(cells[0], 32, "%ld", row->block);
	snprintf(cells[1], 32, "%d", options.batch);
	snprintf(cells[2], 32, "%.3f", row->bandwidth_gbps);
	double values[] = { row->avg_latency_us, row->avg_prep_us, row->p99_prep_us, row->avg_post_us, row->p99_post_us,
		row->avg_tx_us, row->p99_tx_us, row->median_post_to_done_us };
	for (int i = 0; i < 8; i++) {
		snprintf(cells[3 + i], 32, "%.2f", values[i]);
	}
	print_cells(cells);
	printf("%s\n", row->verified ? "" : "  VERIFICATION FAILED");
	fflush(stdout);
}

static void print_json_string(const char *text) {
	putchar('"');
	for (const char *c = text; *c; c++) {
		if (*c == '"' || *c == '\\') {
			printf("\\%c", *c);
		}
		else if ((unsigned char) *c < 0x20) {
			printf("\\u%04x", *c);
		}
		else {
			putchar(*c);
		}
	}
	putchar('"');
}

static void print_json(const row_t *rows, int count) {
	printf("{\"tool\":\"nixl_floor\",\"library\":");
	print_json_string(library);
	printf(",\"processes\":1,\"memory\":\"DRAM -> DRAM\",\"backends\":[{\"plugin\":\"UCX\",\"parameters\":");
	print_params(stdout, true);
	printf("}],"
			"\"progressDelayUs\":%d,\"nativeEnvironment\":{},\"iterations\":%d,\"warmup\":%d,"
			"\"largeBlockFactor\":%d,\"completion\":\"busy-poll\",\"results\":[",
			PROGRESS_DELAY_US, options.iterations, options.warmup, options.large_block_factor);
	for (int i = 0; i < count; i++) {
		const row_t *r = &rows[i];
		printf("%s{\"op\":\"%s\",\"blockSize\":%ld,\"batchSize\":%d,\"iterations\":%d,\"warmup\":%d,"
				"\"bandwidthGBps\":%.3f,\"avgLatencyUs\":%.3f,\"avgPrepUs\":%.3f,\"p99PrepUs\":%.3f,"
				"\"avgPostUs\":%.3f,\"p99PostUs\":%.3f,\"avgTxUs\":%.3f,\"p99TxUs\":%.3f,"
				"\"medianPostToCompletionUs\":%.3f,\"verified\":%s}",
				i == 0 ? "" : ",", r->op, r->block, options.batch, r->iterations, r->warmup, r->bandwidth_gbps,
				r->avg_latency_us, r->avg_prep_us, r->p99_prep_us, r->avg_post_us, r->p99_post_us, r->avg_tx_us,
				r->p99_tx_us, r->median_post_to_done_us, r->verified ? "true" : "false");
	}
	printf("]}\n");
}

/*
 * As nixl4j's NativeLibrary: without RDMA devices, UCX's InfiniBand modules are left out
 * unless UCX_MODULES is set.
 */
static void ucx_defaults(void) {
	if (getenv("UCX_MODULES") != NULL) {
		return;
	}
	DIR *devices = opendir("/sys/class/infiniband");
	bool any = false;
	if (devices != NULL) {
		struct dirent *entry;
		while ((entry = readdir(devices)) != NULL) {
			any |= entry->d_name[0] != '.';
		}
		closedir(devices);
	}
	if (!any) {
		setenv("UCX_MODULES", "^ib", 1);
	}
}

int main(int argc, char **argv) {
	parse(argc, argv);
	default_params();
	ucx_defaults();
	describe_library();
	size_t size = (size_t) options.max_block * options.batch;
	if (posix_memalign((void **) &local_buffer, 4096, size) != 0
			|| posix_memalign((void **) &remote_buffer, 4096, size) != 0) {
		fail("cannot allocate the buffers", NULL);
	}
	memset(local_buffer, 0, size);
	memset(remote_buffer, 0, size);
	initiator = create_agent("nixl-floor", &backends[0]);
	target = create_agent("nixl-floor-target", &backends[1]);
	nixl_capi_reg_dlist_t local_registration = register_buffer(initiator, local_buffer, size);
	nixl_capi_reg_dlist_t remote_registration = register_buffer(target, remote_buffer, size);
	void *metadata;
	size_t metadata_length;
	check(nixl_capi_get_local_md(target, &metadata, &metadata_length), "get_local_md");
	check(nixl_capi_load_remote_md(initiator, metadata, metadata_length, &target_name), "load_remote_md");
	free(metadata);

	int ops[2], op_count = 0;
	if (options.write) {
		ops[op_count++] = NIXL_CAPI_XFER_OP_WRITE;
	}
	if (options.read) {
		ops[op_count++] = NIXL_CAPI_XFER_OP_READ;
	}
	int sizes = 0;
	for (long block = options.min_block; block <= options.max_block; block *= 2) {
		sizes++;
	}
	row_t *rows = malloc(sizeof(row_t) * (size_t) (sizes * op_count));
	int count = 0;
	bool verified = true;
	for (int o = 0; o < op_count; o++) {
		for (long block = options.min_block; block <= options.max_block; block *= 2) {
			rows[count] = measure(ops[o], block);
			verified &= rows[count].verified;
			if (!options.json) {
				if (block == options.min_block) {
					print_header(rows[count].op);
				}
				print_row(&rows[count]);
			}
			count++;
		}
	}
	if (options.json) {
		print_json(rows, count);
	}
	free(rows);
	free(target_name);
	check(nixl_capi_deregister_mem(initiator, local_registration, NULL), "deregister_mem");
	check(nixl_capi_deregister_mem(target, remote_registration, NULL), "deregister_mem");
	nixl_capi_destroy_reg_dlist(local_registration);
	nixl_capi_destroy_reg_dlist(remote_registration);
	nixl_capi_destroy_backend(backends[0]);
	nixl_capi_destroy_backend(backends[1]);
	nixl_capi_destroy_agent(initiator);
	nixl_capi_destroy_agent(target);
	free(local_buffer);
	free(remote_buffer);
	return verified ? 0 : 3;
}
