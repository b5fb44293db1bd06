/* gravfm_uart: LiteX's serial2tcp for a simulation of several boards.
 *
 * A serial line on a TCP port, like LiteX's serial2tcp module, with one difference: each session
 * keeps its own clock-edge state. serial2tcp keeps it in a function-level static, so in a
 * simulation with two serial lines only the first session sees the clock's rising edges and the
 * other line never moves (LiteX 2024.12). gravfm's rack of board SoCs has one line per board.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "error.h"
#include "modules.h"

#define BUFFER_BYTES 2048

struct session_s {
  char *tx, *tx_valid, *tx_ready;   /* the SoC's source: bytes to the host */
  char *rx, *rx_valid, *rx_ready;   /* the SoC's sink: bytes from the host */
  char *sys_clk;
  clk_edge_state_t edge;            /* per session: the point of this module */
  struct event *ev;
  char buffer[BUFFER_BYTES];
  int first, length;
  int fd;
};

static struct event_base *base;

static int port_of(const char *args, int *port)
{
  json_object *root = json_tokener_parse(args ? args : "");
  json_object *value = NULL;
  if (!root || !json_object_object_get_ex(root, "port", &value)) {
    eprintf("gravfm_uart: the module's args need a \"port\"\n");
    return RC_JSERROR;
  }
  *port = json_object_get_int(value);
  return *port > 0 ? RC_OK : RC_ERROR;
}

static void *pad(struct pad_s *pads, const char *name)
{
  for (int i = 0; pads[i].name; i++)
    if (!strcmp(pads[i].name, name))
      return pads[i].signal;
  return NULL;
}

/* One host at a time, as on a serial port: a new connection replaces the old one. The driver
 * probes the port (connect, close) before litex_server connects; if both arrive in one event-loop
 * turn, the probe's close must not take the server's connection with it. */
static void drop_connection(struct session_s *s)
{
  if (!s->ev)
    return;
  event_del(s->ev);
  event_free(s->ev);
  close(s->fd);
  s->ev = NULL;
  s->fd = 0;
}

static void on_readable(int fd, short event, void *arg)
{
  struct session_s *s = arg;
  char chunk[1024];
  ssize_t got;
  if (!(event & EV_READ) || fd != s->fd)
    return;
  got = read(fd, chunk, sizeof chunk);
  if (got < 0)
    return;
  if (got == 0) {   /* the host closed the connection */
    drop_connection(s);
    return;
  }
  for (ssize_t i = 0; i < got && s->length < BUFFER_BYTES; i++) {
    s->buffer[(s->first + s->length) % BUFFER_BYTES] = chunk[i];
    s->length++;
  }
}

static void on_connection(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *address,
                          int socklen, void *ctx)
{
  struct session_s *s = ctx;
  drop_connection(s);
  s->fd = fd;
  s->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_readable, s);
  event_add(s->ev, NULL);   /* no timeout: a quiet host is not a closed one */
}

static int uart_start(void *b)
{
  base = b;
  return RC_OK;
}

static int uart_new(void **sess, char *args)
{
  int port = 0;
  struct sockaddr_in address;
  struct evconnlistener *listener;
  struct session_s *s;
  int ret = port_of(args, &port);
  if (ret != RC_OK)
    return ret;
  s = calloc(1, sizeof *s);
  if (!s)
    return RC_NOENMEM;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  listener = evconnlistener_new_bind(base, on_connection, s, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
                                     (struct sockaddr *)&address, sizeof address);
  if (!listener) {
    eprintf("gravfm_uart: cannot listen on port %d\n", port);
    free(s);
    return RC_ERROR;
  }
  *sess = s;
  return RC_OK;
}

static int uart_add_pads(void *sess, struct pad_list_s *plist)
{
  struct session_s *s = sess;
  if (!s || !plist)
    return RC_INVARG;
  if (!strcmp(plist->name, "serial")) {
    s->rx = pad(plist->pads, "sink_data");
    s->rx_valid = pad(plist->pads, "sink_valid");
    s->rx_ready = pad(plist->pads, "sink_ready");
    s->tx = pad(plist->pads, "source_data");
    s->tx_valid = pad(plist->pads, "source_valid");
    s->tx_ready = pad(plist->pads, "source_ready");
  }
  if (!strcmp(plist->name, "sys_clk"))
    s->sys_clk = pad(plist->pads, "sys_clk");
  return RC_OK;
}

static int uart_tick(void *sess, uint64_t time_ps)
{
  struct session_s *s = sess;
  if (!clk_pos_edge(&s->edge, *s->sys_clk))
    return RC_OK;
  *s->tx_ready = 1;
  /* send(), not write(): a host gone between two ticks drops its connection, never a SIGPIPE */
  if (s->fd && *s->tx_valid && send(s->fd, s->tx, 1, MSG_NOSIGNAL) != 1)
    drop_connection(s);
  *s->rx_valid = 0;
  if (s->length) {
    *s->rx = s->buffer[s->first];
    *s->rx_valid = 1;
    if (*s->rx_ready) {
      s->first = (s->first + 1) % BUFFER_BYTES;
      s->length--;
    }
  }
  return RC_OK;
}

static struct ext_module_s module = {"gravfm_uart", uart_start, uart_new, uart_add_pads, NULL, uart_tick};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
  return register_module(&module);
}
