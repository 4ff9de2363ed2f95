// SPDX-License-Identifier: GPL-2.0
/*
 * C side of atl1c_rs's netdev layer: the layout table the Rust side checks its generated
 * bindings against (netdev/mod.rs, KUnit suite atl1c_rs_layout).
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/stddef.h>

#include "helpers.h"

const size_t atl1c_rs_layout[ATL1C_RS_LAYOUT_COUNT] = {
	[ATL1C_RS_NET_DEVICE_SIZE] = sizeof(struct net_device),
	[ATL1C_RS_NET_DEVICE_ALIGN] = __alignof__(struct net_device),
	[ATL1C_RS_NET_DEVICE_NETDEV_OPS] = offsetof(struct net_device, netdev_ops),
	[ATL1C_RS_NET_DEVICE_ETHTOOL_OPS] = offsetof(struct net_device, ethtool_ops),
	[ATL1C_RS_NET_DEVICE_FLAGS] = offsetof(struct net_device, flags),
	[ATL1C_RS_NET_DEVICE_FEATURES] = offsetof(struct net_device, features),
	[ATL1C_RS_NET_DEVICE_HW_FEATURES] = offsetof(struct net_device, hw_features),
	[ATL1C_RS_NET_DEVICE_MTU] = offsetof(struct net_device, mtu),
	[ATL1C_RS_NET_DEVICE_MIN_MTU] = offsetof(struct net_device, min_mtu),
	[ATL1C_RS_NET_DEVICE_MAX_MTU] = offsetof(struct net_device, max_mtu),
	[ATL1C_RS_NET_DEVICE_WATCHDOG_TIMEO] = offsetof(struct net_device, watchdog_timeo),
	[ATL1C_RS_NET_DEVICE_DEV] = offsetof(struct net_device, dev),
	[ATL1C_RS_NET_DEVICE_NUM_TX_QUEUES] = offsetof(struct net_device, num_tx_queues),
	[ATL1C_RS_NET_DEVICE_REAL_NUM_TX_QUEUES] = offsetof(struct net_device, real_num_tx_queues),
	[ATL1C_RS_NAPI_STRUCT_SIZE] = sizeof(struct napi_struct),
	[ATL1C_RS_SK_BUFF_LEN] = offsetof(struct sk_buff, len),
	[ATL1C_RS_SK_BUFF_DATA] = offsetof(struct sk_buff, data),
	[ATL1C_RS_SK_BUFF_SIZE] = sizeof(struct sk_buff),
};
