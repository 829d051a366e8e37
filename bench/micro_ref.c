/*
 * micro_ref: an LMbench-style reference for feelbench's micro probe, for
 * bench/micro.sh. Written for this project (no LMbench code): it times the
 * probe's 18 operations with the same system calls, sizes and untimed
 * setup/teardown (see src/probe/micro/ops.rs, procs.rs, talk.rs, files.rs),
 * each instance timed with clock_gettime(CLOCK_MONOTONIC), in two modes:
 *
 *   b2b    one operation at a time, instances back to back as LMbench's
 *          loops run them (after 10 untimed ones), for -b seconds and at
 *          least 500 instances (at most 100 000), each instance a loop of
 *          operations sized to take about 1 ms, its time divided by their
 *          number, as the probe's --micro-mode lmbench times them
 *          (src/probe/micro/batch.rs; LMbench's own loops are a mean too);
 *          the page fault as lat_pagefault gives it and the probe's lmbench
 *          mode does: every page of a fresh mapping read, scattered, and
 *          the mapping unmapped, over its pages;
 *   paced  every operation started at once and run in turns at the probe's
 *          rhythm (src/probe/micro/rhythm.rs: each at 50 Hz, in slots
 *          spread evenly over each 20 ms), one operation an instance, for
 *          -p seconds; the page fault one read of the middle page.
 *
 * Like the probe: round trips follow an untimed one; a context switch is
 * lat_ctx's: half a round trip less the median of its overhead (a pass over
 * the working set, the token written to a pipe of its own and read back,
 * timed warm just before each instance, in a loop as long as its round
 * trips'), with half the round trip as timed
 * beside it (OP_raw); partners are forked from this process and nothing is
 * pinned (the probe runs on every CPU unless --probe-cpus; its lmbench mode
 * moves to one CPU: run this under taskset -c 0 to match); timer slack 1 ns.
 * Unlike the probe: fork, exec and sh fork from this small process itself,
 * where the probe forks from a spawner, a copy of its (larger) worker.
 *
 * Output, one line per operation and mode (µs per operation):
 *   MODE OP P50_US P99_US INSTANCES
 * with "-" for the figures of an operation that failed (reason on stderr) and
 * for a switch whose overhead is as long as it is; a switch adds a line
 * MODE OP_raw with half the round trip as timed.
 *
 * Build: gcc -O2 -o micro_ref micro_ref.c
 * Usage: micro_ref [-b SECS] [-p SECS] [-d DIR] [OP...]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ULL
#define OP_RATE_HZ 50              /* the probe's rhythm per operation */
#define MIN_INSTANCES 500          /* b2b: at least this many per operation */
#define MAX_INSTANCES 100000       /* b2b: at most */
#define B2B_WARMUP 10              /* b2b: untimed instances first */
#define CTX_LARGE_BYTES (64 << 10) /* ctx64's working set per process */
#define MAPPED_BYTES (1 << 20)     /* the file mmap and fault map */
#define MMAP_STRIDE (16 << 10)     /* mmap reads a byte every 16 KiB */
#define REPLY_TIMEOUT_S 2          /* SO_RCVTIMEO of the probe's sockets */
#define FAULT_PAGE_STEP 97         /* pages apart of two pages b2b's fault reads */
#define MMAP_WRITTEN (MAPPED_BYTES / 10) /* mmap writes its first tenth */
#define DATAGRAM_BYTES 4           /* udp's message (lat_udp's); the others' 1 */
#define INSTANCE_NS 1000000ULL     /* b2b: an instance lasts about this */
#define MOST_GROWTH 8              /* b2b: an instance grows at most 8x */
#define MOST_OPS 10000             /* b2b: most operations an instance */
#define FILES_PER_INSTANCE 100     /* b2b: most files (lat_fs's per directory) */
#define MAPPINGS_PER_INSTANCE 16   /* b2b: most fresh mappings of the fault */

static volatile uint64_t sink; /* keeps sums and reads from being dropped */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * NS_PER_S + (uint64_t)t.tv_nsec;
}

static void sleep_until_ns(uint64_t deadline_ns)
{
    struct timespec t = {(time_t)(deadline_ns / NS_PER_S), (long)(deadline_ns % NS_PER_S)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

enum channel { PIPES, UNIX_STREAM, TCP, UDP };

/* One operation: what is timed (run), what is not (start once, prepare and
 * tidy around each instance, stop once), and its state. Each function
 * returns 0, or -1 with errno set and `why` naming what failed. */
struct op {
    const char *name;
    int per_instance;
    uint64_t most; /* most operations an instance may hold in b2b */
    int (*start)(struct op *);
    int (*prepare)(struct op *);
    int (*run)(struct op *);
    int (*tidy)(struct op *);
    void (*stop)(struct op *);
    const char *why;
    int error; /* errno when it failed */
    /* fork, exec, sh */
    const char *program;
    char *const *argv;
    /* round trips: the worker's ends, the partner's, the partner; a switch's
     * pipe to itself for its overhead */
    enum channel channel;
    int rx, tx, their_rx, their_tx;
    pid_t partner;
    size_t working_bytes;
    unsigned char *working_set;
    int less_overhead;
    int self_pipe[2];
    /* connect */
    struct sockaddr_in address;
    /* files: create and delete make new files DIR/NAME/NUMBER, mmap and
     * fault map DIR/NAME */
    char path[4096];
    size_t bytes;
    unsigned char *data;
    uint64_t next_file, first_left; /* files first_left..next_file-1 exist */
    int fd;
    unsigned char *map;
    unsigned char *maps[MAPPINGS_PER_INSTANCE]; /* the fault's fresh mappings */
    size_t mapped, maps_read;
    size_t fault_pages; /* pages a fault instance reads: 0 for the middle one */
    uint64_t batch, batch_most; /* operations of the next instance, most */
    /* samples of the current mode, ns per operation, and overheads */
    uint64_t *samples, *overheads;
    size_t count, capacity;
    int failed;
};

static const char *dir = ".";

static int run_fault(struct op *op);

static int fail(struct op *op, const char *why)
{
    op->why = why;
    op->error = errno;
    return -1;
}

static int no_step(struct op *op)
{
    (void)op;
    return 0;
}

static void no_stop(struct op *op)
{
    (void)op;
}

/* --- fork, exec, sh: fork, the child exits or execs, wait (all timed) --- */

static int run_spawn(struct op *op)
{
    pid_t child = fork();
    if (child < 0)
        return fail(op, "cannot fork");
    if (child == 0) {
        if (op->program)
            execv(op->program, op->argv);
        _exit(op->program ? 127 : 0);
    }
    int status;
    if (waitpid(child, &status, 0) < 0)
        return fail(op, "cannot wait for the child");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = ECHILD;
        return fail(op, "the child did not exit with 0");
    }
    return 0;
}

/* --- round trips of a byte to a partner that sends it back ------------- */

/* The sum of a working set's bytes, as the probe's release build computes it
 * (talk.rs, WorkingSet::pass, compiled by rustc to scalar code unrolled by
 * eight bytes, no SIMD): GCC -O2 would otherwise add one byte per cycle. */
static void pass(const unsigned char *ws, size_t bytes)
{
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8)
        sum += ((uint64_t)ws[i] + ws[i + 1]) + ((uint64_t)ws[i + 2] + ws[i + 3]) +
               ((uint64_t)ws[i + 4] + ws[i + 5]) + ((uint64_t)ws[i + 6] + ws[i + 7]);
    for (; i < bytes; i++)
        sum += ws[i];
    sink = sum;
}

static unsigned char *new_working_set(size_t bytes)
{
    unsigned char *ws = malloc(bytes ? bytes : 1);
    if (ws)
        memset(ws, 1, bytes);
    return ws;
}

static size_t message_bytes(enum channel channel)
{
    return channel == UDP ? DATAGRAM_BYTES : 1;
}

static ssize_t send_message(enum channel channel, int fd, const unsigned char *message)
{
    /* The probe writes pipes and AF_UNIX sockets with write, TCP and UDP
     * sockets with send (Rust's std). */
    if (channel == TCP || channel == UDP)
        return send(fd, message, message_bytes(channel), MSG_NOSIGNAL);
    return write(fd, message, message_bytes(channel));
}

static void echo(struct op *op)
{
    unsigned char *ws = new_working_set(op->working_bytes);
    unsigned char message[DATAGRAM_BYTES];
    ssize_t bytes = (ssize_t)message_bytes(op->channel);
    if (!ws)
        return;
    while (read(op->their_rx, message, (size_t)bytes) == bytes) {
        pass(ws, op->working_bytes);
        if (send_message(op->channel, op->their_tx, message) != bytes)
            return;
    }
}

/* Forks a partner running `body`, that dies with this process. */
static pid_t start_partner(struct op *op, void (*body)(struct op *))
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        body(op);
        _exit(0);
    }
    return pid;
}

static void stop_partner(struct op *op)
{
    if (op->partner > 0) {
        kill(op->partner, SIGKILL);
        waitpid(op->partner, NULL, 0);
        op->partner = 0;
    }
}

static int set_reply_timeout(int fd)
{
    struct timeval timeout = {REPLY_TIMEOUT_S, 0};
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
}

static int loopback_socket(int type, struct sockaddr_in *bound)
{
    socklen_t length = sizeof *bound;
    int one = 1;
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    memset(bound, 0, sizeof *bound);
    bound->sin_family = AF_INET;
    bound->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    /* Rust's TcpListener::bind sets SO_REUSEADDR. */
    if ((type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) ||
        bind(fd, (struct sockaddr *)bound, sizeof *bound) < 0 ||
        getsockname(fd, (struct sockaddr *)bound, &length) < 0 ||
        (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The ends of each channel, as talk.rs makes them. */
static int open_channel(struct op *op)
{
    int a[2], b[2], one = 1;
    struct sockaddr_in ours, theirs;
    switch (op->channel) {
    case PIPES:
        if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0)
            return fail(op, "cannot make a pipe");
        op->rx = a[0], op->their_tx = a[1], op->their_rx = b[0], op->tx = b[1];
        return 0;
    case UNIX_STREAM:
        /* No read timeout, as lat_unix: a partner gone closes its end. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) < 0)
            return fail(op, "cannot make an AF_UNIX socket pair");
        op->rx = op->tx = a[0], op->their_rx = op->their_tx = a[1];
        return 0;
    case TCP: {
        int listener = loopback_socket(SOCK_STREAM, &ours);
        if (listener < 0)
            return fail(op, "cannot listen on 127.0.0.1");
        a[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (a[0] < 0 || connect(a[0], (struct sockaddr *)&ours, sizeof ours) < 0)
            return fail(op, "cannot connect on 127.0.0.1");
        a[1] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        close(listener);
        if (a[1] < 0)
            return fail(op, "cannot accept on 127.0.0.1");
        /* No read timeout, as lat_tcp: a partner gone closes its end. */
        if (setsockopt(a[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
            setsockopt(a[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
            return fail(op, "cannot set a socket's options");
        op->rx = op->tx = a[0], op->their_rx = op->their_tx = a[1];
        return 0;
    }
    case UDP:
        a[0] = loopback_socket(SOCK_DGRAM, &ours);
        a[1] = loopback_socket(SOCK_DGRAM, &theirs);
        if (a[0] < 0 || a[1] < 0)
            return fail(op, "cannot bind on 127.0.0.1");
        if (connect(a[0], (struct sockaddr *)&theirs, sizeof theirs) < 0 ||
            connect(a[1], (struct sockaddr *)&ours, sizeof ours) < 0)
            return fail(op, "cannot connect UDP sockets on 127.0.0.1");
        op->rx = op->tx = a[0], op->their_rx = op->their_tx = a[1];
        return set_reply_timeout(a[0]) < 0 ? fail(op, "cannot set a socket's timeout") : 0;
    }
    return fail(op, "unknown channel");
}

static void close_channel(struct op *op)
{
    int fds[4] = {op->rx, op->tx, op->their_rx, op->their_tx};
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0 && (i == 0 || fds[i] != fds[i - 1]))
            close(fds[i]);
    op->rx = op->tx = op->their_rx = op->their_tx = -1;
}

static int start_round_trip(struct op *op)
{
    op->rx = op->tx = op->their_rx = op->their_tx = -1;
    op->self_pipe[0] = op->self_pipe[1] = -1;
    if (op->less_overhead && pipe2(op->self_pipe, O_CLOEXEC) < 0)
        return fail(op, "cannot make a pipe");
    if (open_channel(op) < 0)
        return -1;
    op->partner = start_partner(op, echo);
    if (op->partner < 0)
        return fail(op, "cannot fork a partner process");
    op->working_set = new_working_set(op->working_bytes);
    return op->working_set ? 0 : fail(op, "cannot allocate the working set");
}

static int run_round_trip(struct op *op)
{
    unsigned char message[DATAGRAM_BYTES] = {1};
    ssize_t bytes = (ssize_t)message_bytes(op->channel);
    pass(op->working_set, op->working_bytes);
    if (send_message(op->channel, op->tx, message) != bytes)
        return fail(op, "cannot send to the partner process");
    if (read(op->rx, message, (size_t)bytes) != bytes)
        return fail(op, "no reply from the partner process");
    return 0;
}

/* lat_ctx's overhead: a pass, the token through the pipe to itself. */
static int overhead_pass(struct op *op)
{
    unsigned char byte = 1;
    pass(op->working_set, op->working_bytes);
    if (write(op->self_pipe[1], &byte, 1) != 1 || read(op->self_pipe[0], &byte, 1) != 1)
        return fail(op, "cannot pass a token through a pipe to itself");
    return 0;
}

/* The overhead, warm (after an untimed one), each of n passes in a loop, in
 * ns; 0 when it failed. */
static uint64_t timed_overhead(struct op *op, uint64_t n)
{
    if (overhead_pass(op) < 0)
        return 0;
    uint64_t started_ns = now_ns();
    for (uint64_t i = 0; i < n; i++)
        if (overhead_pass(op) < 0)
            return 0;
    return (now_ns() - started_ns) / n;
}

static void stop_round_trip(struct op *op)
{
    if (op->less_overhead) {
        close(op->self_pipe[0]);
        close(op->self_pipe[1]);
    }
    /* The worker's end closes before the partner is killed, as in talk.rs. */
    close_channel(op);
    stop_partner(op);
    free(op->working_set);
    op->working_set = NULL;
}

/* --- connect: connect to a partner that accepts and closes, close ------ */

static void accept_and_close(struct op *op)
{
    int connection;
    while ((connection = accept4(op->their_rx, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        close(connection);
}

static int start_connect(struct op *op)
{
    op->their_rx = loopback_socket(SOCK_STREAM, &op->address);
    if (op->their_rx < 0)
        return fail(op, "cannot listen on 127.0.0.1");
    op->partner = start_partner(op, accept_and_close);
    close(op->their_rx); /* the worker drops its listener (moved to the partner) */
    return op->partner < 0 ? fail(op, "cannot fork a partner process") : 0;
}

static int run_connect(struct op *op)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(op, "cannot make a socket");
    if (connect(fd, (struct sockaddr *)&op->address, sizeof op->address) < 0) {
        close(fd);
        return fail(op, "cannot connect on 127.0.0.1");
    }
    close(fd);
    return 0;
}

/* --- files: create (open, write, close) and delete (unlink) ------------ */

/* Files of op->bytes; create and delete make new ones (never a name used
 * before) in a directory of their own, as lat_fs and files.rs do. */
static int start_file(struct op *op)
{
    snprintf(op->path, sizeof op->path, "%s/%s", dir, op->name);
    op->next_file = op->first_left = 0;
    op->data = malloc(op->bytes ? op->bytes : 1);
    if (!op->data)
        return fail(op, "cannot allocate a file's data");
    memset(op->data, 0x5a, op->bytes);
    return 0;
}

static int start_new_files(struct op *op)
{
    if (start_file(op) < 0)
        return -1;
    return mkdir(op->path, 0777) < 0 ? fail(op, "cannot make a directory") : 0;
}

static int write_to(struct op *op, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    size_t done = 0;
    if (fd < 0)
        return fail(op, "cannot create a file");
    while (done < op->bytes) {
        ssize_t n = write(fd, op->data + done, op->bytes - done);
        if (n <= 0) {
            close(fd);
            return fail(op, "cannot write a file");
        }
        done += (size_t)n;
    }
    close(fd);
    return 0;
}

static void file_path(struct op *op, uint64_t number, char *path, size_t size)
{
    snprintf(path, size, "%s/%llu", op->path, (unsigned long long)number);
}

/* Makes the next new file. */
static int make_file(struct op *op)
{
    char path[4200];
    file_path(op, op->next_file++, path, sizeof path);
    return write_to(op, path);
}

/* Removes the oldest file left. */
static int remove_oldest(struct op *op)
{
    char path[4200];
    if (op->first_left == op->next_file) {
        errno = ENOENT;
        return fail(op, "cannot delete a file");
    }
    file_path(op, op->first_left++, path, sizeof path);
    return unlink(path) < 0 ? fail(op, "cannot delete a file") : 0;
}

static int remove_all(struct op *op)
{
    while (op->first_left < op->next_file)
        if (remove_oldest(op) < 0)
            return -1;
    return 0;
}

static int make_batch(struct op *op)
{
    for (uint64_t i = 0; i < op->batch; i++)
        if (make_file(op) < 0)
            return -1;
    return 0;
}

static void stop_new_files(struct op *op)
{
    remove_all(op);
    rmdir(op->path);
    free(op->data);
    op->data = NULL;
}

/* --- mmap and fault: a cached 1 MiB file, kept open -------------------- */

static void stop_file(struct op *op)
{
    unlink(op->path);
    free(op->data);
    op->data = NULL;
}

static int start_mapped(struct op *op)
{
    if (start_file(op) < 0 || write_to(op, op->path) < 0)
        return -1;
    /* mmap maps it read-write (lat_mmap), fault read-only (lat_pagefault). */
    op->fd = open(op->path, (op->run == run_fault ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    op->mapped = op->maps_read = 0;
    return op->fd < 0 ? fail(op, "cannot open a file") : 0;
}

/* The fault's instance: the batch's fresh mappings, read-only. */
static int map_batch(struct op *op)
{
    op->mapped = op->maps_read = 0;
    for (uint64_t i = 0; i < op->batch; i++) {
        void *map = mmap(NULL, op->bytes, PROT_READ, MAP_SHARED, op->fd, 0);
        if (map == MAP_FAILED)
            return fail(op, "cannot map a file");
        op->maps[op->mapped++] = map;
    }
    return 0;
}

static int unmap_batch(struct op *op)
{
    while (op->mapped > 0)
        munmap(op->maps[--op->mapped], op->bytes);
    return 0;
}

/* As lat_mmap: map shared, read-write, write a byte every 16 KiB of the
 * first tenth, unmap. */
static int run_mmap(struct op *op)
{
    unsigned char *map = mmap(NULL, op->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, op->fd, 0);
    if (map == MAP_FAILED)
        return fail(op, "cannot map a file");
    for (size_t i = 0; i < MMAP_WRITTEN; i += MMAP_STRIDE)
        ((volatile unsigned char *)map)[i] = 0;
    munmap(map, op->bytes);
    return 0;
}

static int run_fault(struct op *op)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = op->bytes / page;
    volatile unsigned char *map;
    if (op->maps_read == op->mapped) {
        errno = EINVAL;
        return fail(op, "no fresh mapping left");
    }
    map = op->maps[op->maps_read++];
    if (op->fault_pages == 0) {
        sink = map[op->bytes / 2];
        return 0;
    }
    for (size_t k = 0; k < pages; k++)
        sink = map[(k * FAULT_PAGE_STEP) % pages * page];
    return 0;
}

static void stop_mapped(struct op *op)
{
    unmap_batch(op);
    close(op->fd);
    stop_file(op);
}

/* --- the operations, in the probe's order ------------------------------ */

static char *const true_argv[] = {"true", NULL};
static char *const sh_argv[] = {"sh", "-c", "/bin/true", NULL};

#define SPAWN(n, prog, args) \
    {.name = n, .per_instance = 1, .start = no_step, .prepare = no_step, .run = run_spawn, \
     .tidy = no_step, .stop = no_stop, .program = prog, .argv = args}
#define ROUND_TRIP(n, per, chan, ws) \
    {.name = n, .per_instance = per, .start = start_round_trip, .prepare = run_round_trip, \
     .run = run_round_trip, .tidy = no_step, .stop = stop_round_trip, .channel = chan, \
     .working_bytes = ws, .less_overhead = per == 2}
#define CREATE(n, size) \
    {.name = n, .per_instance = 1, .most = FILES_PER_INSTANCE, .start = start_new_files, \
     .prepare = no_step, .run = make_file, .tidy = remove_all, .stop = stop_new_files, \
     .bytes = size}
#define DELETE(n, size) \
    {.name = n, .per_instance = 1, .most = FILES_PER_INSTANCE, .start = start_new_files, \
     .prepare = make_batch, .run = remove_oldest, .tidy = no_step, .stop = stop_new_files, \
     .bytes = size}

static struct op ops[] = {
    SPAWN("fork", NULL, NULL),
    SPAWN("exec", "/bin/true", true_argv),
    SPAWN("sh", "/bin/sh", sh_argv),
    ROUND_TRIP("ctx0", 2, PIPES, 0),
    ROUND_TRIP("ctx64", 2, PIPES, CTX_LARGE_BYTES),
    ROUND_TRIP("pipe", 1, PIPES, 0),
    ROUND_TRIP("unix", 1, UNIX_STREAM, 0),
    ROUND_TRIP("udp", 1, UDP, 0),
    ROUND_TRIP("tcp", 1, TCP, 0),
    {.name = "connect", .per_instance = 1, .start = start_connect, .prepare = no_step,
     .run = run_connect, .tidy = no_step, .stop = stop_partner},
    CREATE("create0", 0),
    DELETE("delete0", 0),
    CREATE("create1k", 1 << 10),
    DELETE("delete1k", 1 << 10),
    CREATE("create10k", 10 << 10),
    DELETE("delete10k", 10 << 10),
    {.name = "mmap", .per_instance = 1, .start = start_mapped, .prepare = no_step,
     .run = run_mmap, .tidy = no_step, .stop = stop_mapped, .bytes = MAPPED_BYTES},
    {.name = "fault", .per_instance = 1, .most = MAPPINGS_PER_INSTANCE, .start = start_mapped,
     .prepare = map_batch, .run = run_fault, .tidy = unmap_batch, .stop = stop_mapped,
     .bytes = MAPPED_BYTES},
};
#define OPS (sizeof ops / sizeof ops[0])

/* --- timing and figures ------------------------------------------------ */

/* The size of the instance after one of op->batch that took elapsed_ns:
 * as many as take INSTANCE_NS at that pace, growing at most MOST_GROWTH
 * times, between 1 and op->batch_most (batch.rs). */
static void size_batch(struct op *op, uint64_t elapsed_ns)
{
    uint64_t fit = op->batch * INSTANCE_NS / (elapsed_ns ? elapsed_ns : 1);
    uint64_t most = op->batch * MOST_GROWTH < op->batch_most ? op->batch * MOST_GROWTH : op->batch_most;
    op->batch = fit < 1 ? 1 : fit > most ? most : fit;
}

/* One instance of op->batch operations: prepare, run them (timed), tidy;
 * records ns per operation when `keep`, then sizes the next. Returns -1
 * when the operation failed (and marks it). */
static int instance(struct op *op, int keep)
{
    uint64_t overhead_ns = 0, n = op->batch;
    if (op->prepare(op) < 0)
        goto failed;
    if (op->less_overhead && (overhead_ns = timed_overhead(op, n)) == 0)
        goto failed;
    uint64_t started_ns = now_ns();
    for (uint64_t i = 0; i < n; i++)
        if (op->run(op) < 0)
            goto failed;
    /* b2b's fault: the unmapping of the pages read is timed too, as
     * lat_pagefault's difference keeps it (files.rs). */
    if (op->fault_pages)
        unmap_batch(op);
    uint64_t elapsed_ns = now_ns() - started_ns;
    if (op->tidy(op) < 0)
        goto failed;
    if (keep && op->count < op->capacity) {
        uint64_t per = op->fault_pages ? op->fault_pages : (uint64_t)op->per_instance;
        op->overheads[op->count] = overhead_ns;
        op->samples[op->count++] = elapsed_ns / (per * n);
    }
    size_batch(op, elapsed_ns);
    return 0;
failed:
    op->failed = 1;
    return -1;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The sample at quantile q, as HdrHistogram reads it: the smallest value
 * with at least q of the samples at or below it. */
static double quantile_us(const uint64_t *sorted, size_t count, double q)
{
    size_t rank = (size_t)(q * (double)count + 0.999999);
    return (double)sorted[rank ? rank - 1 : 0] / 1e3;
}

/* A figure less an overhead, as lat_ctx gives it: "-" when nothing is left. */
static void print_less(double value_us, double less_us)
{
    if (value_us > less_us)
        printf(" %.3f", value_us - less_us);
    else
        printf(" -");
}

static void report(const char *mode, struct op *op)
{
    if (op->failed || op->count == 0) {
        fprintf(stderr, "micro_ref: %s %s: %s: %s\n", mode, op->name,
                op->why ? op->why : "no instance", strerror(op->error));
        printf("%s %s - - %zu\n", mode, op->name, op->count);
        if (op->less_overhead)
            printf("%s %s_raw - - %zu\n", mode, op->name, op->count);
        fflush(stdout);
        return;
    }
    qsort(op->samples, op->count, sizeof *op->samples, by_value);
    double p50_us = quantile_us(op->samples, op->count, 0.5);
    double p99_us = quantile_us(op->samples, op->count, 0.99);
    if (op->less_overhead) {
        qsort(op->overheads, op->count, sizeof *op->overheads, by_value);
        double overhead_us = quantile_us(op->overheads, op->count, 0.5);
        printf("%s %s", mode, op->name);
        print_less(p50_us, overhead_us);
        print_less(p99_us, overhead_us);
        printf(" %zu\n", op->count);
        printf("%s %s_raw %.3f %.3f %zu\n", mode, op->name, p50_us, p99_us, op->count);
    } else {
        printf("%s %s %.3f %.3f %zu\n", mode, op->name, p50_us, p99_us, op->count);
    }
    fflush(stdout);
}

/* Starts `op` for `capacity` instances; `b2b`: LMbench's way, instances
 * of loops of operations and its page fault, if it is the fault, read over
 * every page; else one operation an instance. */
static int begin(struct op *op, size_t capacity, int b2b)
{
    op->batch = 1;
    op->batch_most = b2b ? (op->most ? op->most : MOST_OPS) : 1;
    op->failed = 0;
    op->why = NULL;
    op->error = 0;
    op->count = 0;
    op->capacity = capacity;
    op->samples = malloc(capacity * sizeof *op->samples);
    op->overheads = malloc(capacity * sizeof *op->overheads);
    op->fd = -1;
    op->fault_pages = b2b && op->run == run_fault ? op->bytes / (size_t)sysconf(_SC_PAGESIZE) : 0;
    if (!op->samples || !op->overheads || op->start(op) < 0) {
        op->failed = 1;
        return -1;
    }
    return 0;
}

static void end(struct op *op)
{
    op->stop(op);
    free(op->samples);
    free(op->overheads);
    op->samples = op->overheads = NULL;
}

/* LMbench's way: one operation at a time, back to back. */
static void back_to_back(struct op *op, uint64_t budget_ns)
{
    if (begin(op, MAX_INSTANCES, 1) == 0) {
        for (int i = 0; i < B2B_WARMUP && instance(op, 0) == 0; i++) {
        }
        uint64_t started_ns = now_ns();
        while (!op->failed && op->count < MAX_INSTANCES &&
               (op->count < MIN_INSTANCES || now_ns() - started_ns < budget_ns))
            instance(op, 1);
    }
    report("b2b", op);
    end(op);
}

/* The probe's way: every operation started, then in turns, each at
 * OP_RATE_HZ in slots spread evenly over the period; an operation that fails
 * leaves the turns and the rhythm starts again (rhythm.rs, mod.rs). */
static void paced(struct op **chosen, size_t n, uint64_t length_ns)
{
    struct op *turns[OPS];
    size_t running = 0;
    for (size_t i = 0; i < n; i++)
        if (begin(chosen[i], length_ns / (NS_PER_S / OP_RATE_HZ) + 2, 0) == 0)
            turns[running++] = chosen[i];
    uint64_t next_ns = now_ns(), end_ns = next_ns + length_ns;
    uint64_t slot_ns = running ? NS_PER_S / OP_RATE_HZ / running : 0;
    size_t turn = 0;
    while (running > 0 && next_ns < end_ns) {
        sleep_until_ns(next_ns);
        if (instance(turns[turn], 1) < 0) {
            memmove(&turns[turn], &turns[turn + 1], (running - turn - 1) * sizeof *turns);
            running--;
            next_ns = now_ns();
            slot_ns = running ? NS_PER_S / OP_RATE_HZ / running : 0;
            turn = 0;
            continue;
        }
        uint64_t ended_ns = now_ns();
        next_ns += slot_ns;
        if (ended_ns > next_ns + slot_ns * running)
            next_ns = ended_ns;
        turn = (turn + 1) % running;
    }
    for (size_t i = 0; i < n; i++) {
        report("paced", chosen[i]);
        end(chosen[i]);
    }
}

static void usage(FILE *to)
{
    fprintf(to,
            "Usage: micro_ref [-b SECS] [-p SECS] [-d DIR] [OP...]\n"
            "  -b SECS  back to back: seconds per operation, at least %d instances (default 0.5; 0: skip)\n"
            "  -p SECS  paced at the probe's rhythm, all operations in turns (default 10; 0: skip)\n"
            "  -d DIR   directory of the files of create, delete, mmap and fault (default .)\n"
            "  OP       operations to run (default all): fork exec sh ctx0 ctx64 pipe unix udp\n"
            "           tcp connect create0 delete0 create1k delete1k create10k delete10k mmap fault\n"
            "Prints per operation and mode: MODE OP P50_US P99_US INSTANCES\n",
            MIN_INSTANCES);
}

static int seconds(const char *text, double *value)
{
    char *rest;
    *value = strtod(text, &rest);
    return *rest == '\0' && *value >= 0 && *value < 3600;
}

int main(int argc, char **argv)
{
    double b2b_s = 0.5, paced_s = 10;
    struct op *chosen[OPS];
    size_t n = 0;
    int opt;
    while ((opt = getopt(argc, argv, "b:p:d:h")) != -1) {
        switch (opt) {
        case 'b':
            if (!seconds(optarg, &b2b_s))
                goto bad;
            break;
        case 'p':
            if (!seconds(optarg, &paced_s))
                goto bad;
            break;
        case 'd':
            dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            goto bad;
        }
    }
    for (int i = optind; i < argc; i++) {
        size_t k = 0;
        while (k < OPS && strcmp(ops[k].name, argv[i]) != 0)
            k++;
        if (k == OPS) {
            fprintf(stderr, "micro_ref: unknown operation %s\n", argv[i]);
            goto bad;
        }
        chosen[n++] = &ops[k];
    }
    if (n == 0)
        for (size_t k = 0; k < OPS; k++)
            chosen[n++] = &ops[k];
    /* A partner gone must fail a write, not kill this process. */
    signal(SIGPIPE, SIG_IGN);
    /* The probe's default --timer-slack. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    printf("# MODE OP P50_US P99_US INSTANCES\n");
    if (b2b_s > 0)
        for (size_t i = 0; i < n; i++)
            back_to_back(chosen[i], (uint64_t)(b2b_s * NS_PER_S));
    if (paced_s > 0)
        paced(chosen, n, (uint64_t)(paced_s * NS_PER_S));
    return 0;
bad:
    usage(stderr);
    return 2;
}
