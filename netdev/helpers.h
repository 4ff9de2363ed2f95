/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-written C shims for what bindgen cannot wrap: macros, and the C side of the layout
 * guard. Static inline functions are wrapped by bindgen --wrap-static-fns instead.
 */
#ifndef ATL1C_RS_HELPERS_H
#define ATL1C_RS_HELPERS_H

#include <linux/dma-direction.h>
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

#ifndef ATL1C_RS_HELPERS_H2
#define ATL1C_RS_HELPERS_H2

struct sk_buff;
struct net_device;
struct netdev_queue;
struct napi_struct;

/* What the transmit path needs to know about an skb (fields behind macros and bitfields). */
struct atl1c_rs_skb_info {
	u32 len;
	u32 headlen;
	u32 nr_frags;
	u32 gso_size;
	u32 gso_type;
	u32 ip_summed;
	u32 csum_start;		/* offset from skb->data */
	u32 csum_offset;
	u32 transport_offset;
	u32 network_offset;
	u32 tcp_all_headers;	/* GSO only */
	u32 vlan_present;
	u32 vlan_tci;
	u32 queue;
	u32 gso_segs;
};

void atl1c_rs_skb_info(struct sk_buff *skb, struct atl1c_rs_skb_info *info);
/* Prepares a GSO skb's headers for hardware LSO; 0 or -errno. */
int atl1c_rs_skb_tso_prep(struct sk_buff *skb);
/*
 * Maps fragment i of skb to the device: its bus address and size. -EINVAL when the skb has no
 * fragment i, -ENOMEM when the mapping fails (checked, for DMA-API debugging), else 0.
 */
int atl1c_rs_skb_map_frag(struct device *dev, struct sk_buff *skb, u32 i, dma_addr_t *addr,
			  u32 *size);
/*
 * Maps [off, off + len) of skb's linear buffer from skb->data on (the head, and the tailroom
 * of a linear skb, where a receive buffer lies) in direction dir. -EINVAL for an empty range
 * or one beyond the buffer, -ENOMEM when the mapping fails, else 0.
 */
int atl1c_rs_skb_map_linear(struct device *dev, struct sk_buff *skb, u32 off, u32 len,
			    enum dma_data_direction dir, dma_addr_t *addr);
void atl1c_rs_skb_set_csum_unnecessary(struct sk_buff *skb);
void atl1c_rs_skb_set_vlan(struct sk_buff *skb, u16 tci);
int atl1c_rs_mc_list(struct net_device *dev, u8 *out, int max);
void atl1c_rs_set_parent(struct net_device *dev, struct device *parent);
void atl1c_rs_set_live_addr_change(struct net_device *dev);
/* bit 0: IFF_PROMISC, bit 1: IFF_ALLMULTI */
unsigned int atl1c_rs_rx_flags(struct net_device *dev);
int atl1c_rs_xmit_more(void);
/* dma_rmb(): reads of coherent DMA memory after this one are not satisfied before it. */
void atl1c_rs_dma_rmb(void);
/*
 * ndo_features_check: GSO skbs whose segment size exceeds max_gso_size are segmented by the
 * stack instead; then the VLAN checks the core applies when a driver has no features_check.
 */
unsigned long long atl1c_rs_features_check(struct sk_buff *skb, unsigned long long features,
					   u32 max_gso_size);
void atl1c_rs_bh_disable(void);
struct work_struct;
/* One helper per work item: each INIT_WORK call site is its own lockdep class. */
void atl1c_rs_init_task_work(struct work_struct *w, void (*fn)(struct work_struct *));
void atl1c_rs_init_dim_work(struct work_struct *w, void (*fn)(struct work_struct *));
int atl1c_rs_schedule_work(struct work_struct *w);
void atl1c_rs_rtnl_lock(void);
void atl1c_rs_rtnl_unlock(void);
void atl1c_rs_bh_enable(void);
void atl1c_rs_rx_deliver(struct napi_struct *napi, struct sk_buff *skb, struct net_device *dev,
			 u16 queue);
void atl1c_rs_set_mtu(struct net_device *dev, unsigned int mtu);
struct ethtool_drvinfo;
/* get_drvinfo: the driver name and the parent device's name (the PCI address). */
void atl1c_rs_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info, const char *driver);
/* device_set_wakeup_enable on the parent device. */
void atl1c_rs_set_wakeup(struct net_device *dev, bool enable);
int atl1c_rs_txq_maybe_stop(struct netdev_queue *txq, unsigned int (*avail)(const void *),
			    const void *ctx, unsigned int stop_thrs, unsigned int start_thrs);
int atl1c_rs_txq_completed_wake(struct netdev_queue *txq, unsigned int pkts, unsigned int bytes,
				unsigned int (*avail)(const void *), const void *ctx,
				unsigned int start_thrs);
struct page_pool;
struct page;
/*
 * Receive buffers from a page_pool. Each is buf_len bytes the card may write, after
 * NET_SKB_PAD + NET_IP_ALIGN bytes of headroom and before the skb_shared_info that
 * napi_build_skb puts at its end: a fragment of a page (two per page at MTU 1500), or a whole
 * page of the order that holds it (jumbo frames).
 *
 * The pool of a ring of count buffers: mapped for the device (DMA_FROM_DEVICE) and synced for
 * it when a page comes back. No NAPI instance is given to it: only its owner allocates, and
 * pages come back through its ring (never straight into its allocation cache). 0 and *pool,
 * -EINVAL for a buffer length of 0 or above 64 KiB, or -errno.
 */
int atl1c_rs_rx_pool_create(struct device *dev, struct net_device *netdev, u32 count,
			    u32 buf_len, struct page_pool **pool);
/*
 * A buffer of pool (its buf_len), from the zone the device's DMA mask reaches: its page, the
 * offset and size (truesize) of its fragment, and the bus address where the card may write.
 * NULL when there is no page (counted by the caller).
 */
struct page *atl1c_rs_rx_page_alloc(struct page_pool *pool, u32 buf_len, u32 *offset,
				    u32 *truesize, dma_addr_t *addr);
/*
 * An skb around a received buffer: syncs the sync_len bytes the card wrote for the CPU, puts
 * len of them, marks the skb for recycling into pool. NULL when no skb could be had: the page
 * then goes back to the pool. napi_build_skb in softirq context, build_skb elsewhere. The
 * caller bounds len <= sync_len <= buf_len.
 */
struct sk_buff *atl1c_rs_rx_page_build_skb(struct page_pool *pool, struct page *page,
					   u32 offset, u32 truesize, u32 sync_len, u32 len);
/* Gives a buffer back to its pool (from any context). */
void atl1c_rs_rx_page_free(struct page_pool *pool, struct page *page);
#endif
