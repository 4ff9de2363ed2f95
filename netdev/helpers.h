/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-written C shims for what bindgen cannot wrap: macros, and the C side of the layout
 * guard. Static inline functions are wrapped by bindgen --wrap-static-fns instead.
 */
#ifndef ATL1C_RS_HELPERS_H
#define ATL1C_RS_HELPERS_H

#include <linux/types.h>

/* Indices into atl1c_rs_layout[], each the C offsetof/sizeof of what the Rust side uses. */
#define ATL1C_RS_NET_DEVICE_SIZE                 0
#define ATL1C_RS_NET_DEVICE_ALIGN                1
#define ATL1C_RS_NET_DEVICE_NETDEV_OPS           2
#define ATL1C_RS_NET_DEVICE_ETHTOOL_OPS          3
#define ATL1C_RS_NET_DEVICE_FLAGS                4
#define ATL1C_RS_NET_DEVICE_FEATURES             5
#define ATL1C_RS_NET_DEVICE_HW_FEATURES          6
#define ATL1C_RS_NET_DEVICE_MTU                  7
#define ATL1C_RS_NET_DEVICE_MIN_MTU              8
#define ATL1C_RS_NET_DEVICE_MAX_MTU              9
#define ATL1C_RS_NET_DEVICE_WATCHDOG_TIMEO       10
#define ATL1C_RS_NET_DEVICE_DEV                  11
#define ATL1C_RS_NET_DEVICE_NUM_TX_QUEUES        12
#define ATL1C_RS_NET_DEVICE_REAL_NUM_TX_QUEUES   13
#define ATL1C_RS_NAPI_STRUCT_SIZE                14
#define ATL1C_RS_SK_BUFF_LEN                     15
#define ATL1C_RS_SK_BUFF_DATA                    16
#define ATL1C_RS_SK_BUFF_SIZE                    17
#define ATL1C_RS_LAYOUT_COUNT                    18

extern const size_t atl1c_rs_layout[ATL1C_RS_LAYOUT_COUNT];

#endif
