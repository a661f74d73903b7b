"""`reverie bench chinese [--model M]`: vector and hybrid search on Chinese memory text.

A small labelled set written for this project: 24 Chinese facts of the kind an
agent's daily log holds, among 24 unrelated Chinese distractor lines, and for
each fact one Chinese query that paraphrases it (few shared words, so keyword
search alone often misses). Reports hit@1 and hit@5 per mode with the
production SearchIndex. --model picks SearchSettings.embedding_model.
Last line: `chinese model=ID keyword@5=... meaning@5=... hybrid@5=...`
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from core.bench import _evalkit as kit

FACTS = [
    ("王芳喜欢喝绿茶，不喝咖啡。", "她平时爱喝什么饮料？"),
    ("测试环境的数据库端口是 5433。", "测试库用哪个端口连接？"),
    ("陈伟下周一到周五在上海出差。", "陈伟什么时候去外地工作？"),
    ("我们决定用 PostgreSQL 代替 MySQL。", "最后选了哪种数据库软件？"),
    ("孩子对花生过敏，聚餐时要注意。", "家里谁有食物过敏？"),
    ("每周三下午三点开项目例会。", "团队的固定会议安排在什么时间？"),
    ("新版本的发布推迟到十二月中旬。", "上线日期往后延了吗？"),
    ("服务器的硬盘快满了，需要清理日志。", "机器的存储空间还够吗？"),
    ("李明的猫叫豆豆，今年三岁。", "李明养了什么宠物？"),
    ("周末去香山爬山，风景很美。", "上周末做了什么户外活动？"),
    ("客户要求报表导出为 Excel 格式。", "用户希望报表是什么文件类型？"),
    ("登录页面在手机上显示错位。", "移动端的界面有什么问题？"),
    ("张伟负责这次的安全审计。", "谁在做系统安全检查？"),
    ("每天早上七点跑步半小时。", "他有什么晨练习惯？"),
    ("预算只剩下两万元，要省着用。", "项目还有多少钱可以花？"),
    ("备份任务每天凌晨两点运行。", "数据什么时候自动备份？"),
    ("小红在学习日语，准备明年去东京。", "谁打算出国，去哪里？"),
    ("接口响应时间从 800 毫秒降到了 120 毫秒。", "性能优化的效果怎么样？"),
    ("办公室的打印机又坏了。", "公司的什么设备出故障了？"),
    ("妈妈的生日是三月八号。", "母亲哪天过生日？"),
    ("我们把代码仓库迁移到了 GitLab。", "源代码现在放在哪个平台？"),
    ("赵磊对加班很有意见。", "谁对工作时长不满？"),
    ("火车票已经订好了，后天早上出发。", "出行的交通安排好了吗？"),
    ("这个月的电费比上个月高了一倍。", "最近家里哪项开支涨了？"),
]
DISTRACTORS = [
    "今天天气晴朗，气温二十度。", "晚饭吃了饺子和酸菜鱼。", "看了一部关于宇宙的纪录片。",
    "楼下新开了一家面包店。", "地铁二号线今天很挤。", "整理了书架上的旧杂志。",
    "读完了《三体》的第二部。", "给阳台的花浇了水。", "下午喝了一杯奶茶。",
    "更新了电脑的操作系统。", "学会了做红烧肉。", "和朋友视频聊天到很晚。",
    "小区里在修路，有点吵。", "买了一双新的运动鞋。", "公园里的樱花开了。",
    "把冬天的衣服收起来了。", "听了一场古典音乐会。", "手机屏幕不小心摔裂了。",
    "报名了一个摄影课程。", "家里的网速变慢了。", "去超市买了水果和牛奶。",
    "邻居家的狗晚上一直叫。", "把旧照片扫描成电子版。", "在网上订了一个书桌。",
]


def register(sub) -> None:
    parser = sub.add_parser("chinese", help="vector and hybrid search on a small labelled Chinese set")
    parser.add_argument("--model", default="", help="SearchSettings.embedding_model (default: the bundled MiniLM)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override an index option or search tuning knob (for ablations), e.g. cjk_words=false")
    parser.set_defaults(func=run)


def run(args) -> int:
    from core.config import SearchSettings
    from core.index import SearchIndex

    settings = SearchSettings(embedding_model=args.model)
    options, tuning = kit.overrides(args.set)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "memory").mkdir()
        lines = ["# 2026-11-30", ""]
        where = {}
        for i, (fact, _query) in enumerate(FACTS):
            lines.append(f"- {fact}")
            where[i] = len(lines)
            lines.append(f"- {DISTRACTORS[i]}")
        (root / "memory" / "2026-11-30.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index = SearchIndex(root, root / ".reverie" / "index.db", settings, background=False, options=options,
                            tuning=tuning)
        try:
            index.sync()
            scores = {}
            for mode in ("keyword", "meaning", "hybrid"):
                at1, at5 = [], []
                for i, (_fact, query) in enumerate(FACTS):
                    ranked = [h.line for h in index.search(query, k=5, mode=mode).ranked]
                    at1.append(float(ranked[:1] == [where[i]]))
                    at5.append(float(where[i] in ranked))
                scores[mode] = (kit.mean(at1), kit.mean(at5))
                print(f"{mode:<8} hit@1={scores[mode][0]:.3f} hit@5={scores[mode][1]:.3f}")
            model = index.status().embedding_model.split("@")[0]
        finally:
            index.close()
    print(f"chinese model={Path(model).name or model} keyword@5={scores['keyword'][1]:.3f} "
          f"meaning@5={scores['meaning'][1]:.3f} hybrid@5={scores['hybrid'][1]:.3f}")
    sys.stdout.flush()
    return 0
